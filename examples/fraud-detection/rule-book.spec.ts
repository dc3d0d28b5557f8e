import { describe, expect, it } from 'vitest';
import type { BroadcastState } from '@weir/engine';
import type { VersionedRule } from '@weir/rules';
import { fraudRuleLimits } from './job';
import { applyRuleMessage } from './rule-book';

function memoryState(): BroadcastState<VersionedRule> & { map: Map<string, VersionedRule> } {
  const map = new Map<string, VersionedRule>();
  return { map, get: (k) => map.get(k), entries: () => [...map.entries()], put: (k, v) => void map.set(k, v), remove: (k) => void map.delete(k) };
}

const rule = { ruleId: 'r', state: 'ACTIVE', groupingKeys: ['payer'], function: 'COUNT', comparison: '>', limit: 3, windowMs: 1_000 };
const limits = fraudRuleLimits(60_000);

describe('applyRuleMessage', () => {
  it('numbers unversioned rules previous + 1 and keeps explicit versions (a rollback re-publishes one)', () => {
    const state = memoryState();
    expect(applyRuleMessage(rule, state, limits)).toMatchObject({ outcome: 'applied', rule: { version: 1 } });
    expect(applyRuleMessage({ ...rule, state: 'PAUSED' }, state, limits)).toMatchObject({ outcome: 'applied', rule: { version: 2, state: 'PAUSED' } });
    expect(applyRuleMessage({ ...rule, version: 9 }, state, limits)).toMatchObject({ rule: { version: 9 } });
    expect(applyRuleMessage({ ...rule, version: 1 }, state, limits)).toMatchObject({ rule: { version: 1 } });
    expect(state.map.get('r')?.version).toBe(1);
  });

  it('deletes, and rejects an invalid message without touching the state', () => {
    const state = memoryState();
    applyRuleMessage(rule, state, limits);
    const rejected = applyRuleMessage({ ...rule, windowMs: 120_000 }, state, limits);
    expect(rejected).toEqual({ outcome: 'rejected', ruleId: 'r', problems: ["rule.windowMs: 120000 ms is longer than this job's limit of 60000 ms"] });
    expect(state.map.get('r')?.windowMs).toBe(1_000);
    expect(applyRuleMessage({ ruleId: 'r', deleted: true }, state, limits)).toEqual({ outcome: 'deleted', ruleId: 'r', shadow: false });
    expect(state.map.size).toBe(0);
    expect(applyRuleMessage(null, state, limits)).toMatchObject({ outcome: 'rejected', ruleId: undefined });
  });
});

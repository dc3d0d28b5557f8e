import { describe, expect, it } from 'vitest';
import { expectedRuleIds, rolloutRecords } from './rollout-records';
import type { Rollout, RuleSetVersion } from './rule-set';

const v3: RuleSetVersion = { deploymentId: 'd1', version: 3, rules: [{ ruleId: 'a', limit: 1 }, { ruleId: 'b', limit: 2 }], createdAt: new Date(0) };
const rollout = (kind: Rollout['kind'], ids: string[]): Rollout => ({
  id: 'ro_1', deploymentId: 'd1', version: 3, kind, phase: 'ROLLING_OUT', publishTs: 1_234, rulesTopic: 't.x.rules', acksTopic: 't.x.acks',
  expectedRuleIds: ids, rulesOffset: null, message: null, createdAt: new Date(0), completedAt: null,
});

describe('rollout records', () => {
  it('expects the version’s rules, then the previous rules it drops', () => {
    expect(expectedRuleIds(v3, [{ ruleId: 'b' }, { ruleId: 'gone' }])).toEqual(['a', 'b', 'gone']);
    expect(expectedRuleIds(v3, [])).toEqual(['a', 'b']);
  });

  it('publishes each rule with the set’s version, then deletions, all stamped with the rollout timestamp', () => {
    const records = rolloutRecords(rollout('ROLLOUT', ['a', 'b', 'gone']), v3);
    expect(records.map((r) => [r.key, JSON.parse(String(r.value)), r.timestamp, r.topic])).toEqual([
      ['a', { ruleId: 'a', limit: 1, version: 3 }, 1_234, 't.x.rules'],
      ['b', { ruleId: 'b', limit: 2, version: 3 }, 1_234, 't.x.rules'],
      ['gone', { ruleId: 'gone', deleted: true, version: 3 }, 1_234, 't.x.rules'],
    ]);
  });

  it('marks shadow records and keys them by the shadow slot', () => {
    const records = rolloutRecords(rollout('SHADOW', ['a', 'b', 'old']), v3);
    expect(records.map((r) => [r.key, JSON.parse(String(r.value)).shadow])).toEqual([['a#shadow', true], ['b#shadow', true], ['old#shadow', true]]);
    expect(JSON.parse(String(records[2].value))).toEqual({ ruleId: 'old', deleted: true, version: 3, shadow: true });
  });
});

import { planPartitioning, unsplitLayout } from '@weir/partitioner';
import { describe, expect, it } from 'vitest';
import { describeDecision, isNotable, kindOf, shouldRecord, signatureOf } from './decision-record';
import { detect } from './detection';

const policy = { actAbove: 1.1 };
const owners = [0, 0, 1, 1];
const layout = unsplitLayout(2, owners);
const model = (rates: number[], keys: { key: string; keyGroup: number; rate: number }[] = []) => ({
  keyGroupRates: rates,
  keyRates: keys.map((k) => ({ ...k, error: 0 })),
  capacities: [null, null],
  stateBytes: [0, 0, 0, 0],
});

describe('which decisions are recorded, and how they read', () => {
  it('a balanced operator is not recorded: it declines on the hysteresis band alone', () => {
    const decision = planPartitioning({ layout, load: model([100, 100, 100, 100]), nowMs: 0, splittable: false });
    expect(decision.declined.map((d) => d.reason)).toEqual(['hysteresis']);
    expect(isNotable(decision)).toBe(false);
    expect(shouldRecord(decision, null, 0, 300_000)).toBe(false);
  });

  it('a skew is a MOVE_KEY_GROUPS decision naming the overloaded subtask, and the same one is not recorded again within the cool-down', () => {
    const load = model([300, 300, 100, 100]);
    const decision = planPartitioning({ layout, load, nowMs: 0, splittable: false });
    expect(kindOf(decision)).toBe('MOVE_KEY_GROUPS');
    const detection = detect(layout, load, decision, policy);
    expect(detection.overloadedSubtasks).toEqual([{ subtask: 0, load: 600, fairLoad: 400, ratio: 1.5, capacity: null, topKeyGroups: [{ keyGroup: 0, rate: 300 }, { keyGroup: 1, rate: 300 }] }]);
    expect(describeDecision('counts', decision, detection, 'auto')).toMatch(/^operator counts: subtask 0 at 1\.50× its fair load \(600 of 400 records\/s\); moving 2 key groups \(0: 0 → 1, 2: 1 → 0\) for 1\.50× → 1\.00×$/);
    expect(describeDecision('counts', decision, detection, 'recommend')).toContain('recommends moving 2 key groups');

    const last = { signature: signatureOf(decision), decidedAtMs: 0 };
    expect(shouldRecord(decision, last, 60_000, 300_000)).toBe(false);
    expect(shouldRecord(decision, last, 300_000, 300_000)).toBe(true);
    expect(shouldRecord(decision, { ...last, signature: 'another' }, 60_000, 300_000)).toBe(true);
  });

  it('a hot key that may not be split is flagged and recorded as DECLINED (not-mergeable) when no move helps', () => {
    // Key group 0 is one key at 900 of 1,000 records/s: no placement of whole key groups gets below 1.8×.
    const load = model([900, 40, 30, 30], [{ key: 'viral', keyGroup: 0, rate: 880 }]);
    const decision = planPartitioning({ layout: unsplitLayout(2, [0, 1, 1, 1]), load, nowMs: 0, splittable: false });
    expect(decision.moves).toEqual([]);
    expect(decision.declined.map((d) => d.reason)).toContain('not-mergeable');
    expect(isNotable(decision)).toBe(true);
    expect(kindOf(decision)).toBe('DECLINED');
    const detection = detect(unsplitLayout(2, [0, 1, 1, 1]), load, decision, policy);
    expect(detection.hotKeys).toEqual([{ key: 'viral', keyGroup: 0, rate: 880, share: 0.88, ofFairLoad: 1.76, error: 0, subtask: 0 }]);
    expect(describeDecision('counts', decision, detection, 'auto')).toContain('hot key "viral" (key group 0, 88.0% of records)');
  });
});

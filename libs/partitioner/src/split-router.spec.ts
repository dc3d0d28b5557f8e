import { describe, expect, it } from 'vitest';
import { keyGroupOfKey } from '@weir/engine';
import { PartitionerInputError } from './errors';
import { SplitRouter } from './split-router';
import { layoutOf, rangeOwners } from './test-support/load';

const MAXP = 128;
const n = 8;
const owners = rangeOwners(n, MAXP);
const hot = 'merchant-42';
const hotGroup = keyGroupOfKey(hot, MAXP);
const split = { key: hot, keyGroup: hotGroup, subtasks: [owners[hotGroup], 5, 2], weights: [0.5, 0.3, 0.2] };
const router = SplitRouter.fromLayout(layoutOf(n, owners, [split]));

describe('SplitRouter', () => {
  it('routes keys that are not split to their key group owner, whatever the sequence', () => {
    for (let i = 0; i < 1000; i++) {
      const key = `customer-${i}`;
      const kg = keyGroupOfKey(key, MAXP);
      expect(router.route(key, kg, i * 7919)).toBe(owners[kg]);
    }
    expect(router.hasSplitKey(hotGroup)).toBe(true);
    expect(router.holdersOf('customer-1', keyGroupOfKey('customer-1', MAXP))).toEqual([owners[keyGroupOfKey('customer-1', MAXP)]]);
  });

  it('spreads a split key by its weights: even a short run of consecutive sequences lands in proportion', () => {
    for (const records of [100, 10_000]) {
      const counts = new Map<number, number>();
      for (let seq = 0; seq < records; seq++) {
        const s = router.route(hot, hotGroup, 1_000_000 + seq);
        counts.set(s, (counts.get(s) ?? 0) + 1);
      }
      expect([...counts.keys()].sort()).toEqual([...split.subtasks].sort());
      split.subtasks.forEach((s, i) => expect(Math.abs((counts.get(s) ?? 0) / records - split.weights[i])).toBeLessThanOrEqual(records === 100 ? 0.03 : 0.002));
    }
  });

  it('is deterministic per record: the same sequence picks the same subtask, in another router of the same layout too', () => {
    const again = SplitRouter.fromLayout(layoutOf(n, owners, [{ ...split }]));
    for (let seq = 0; seq < 500; seq++) expect(again.route(hot, hotGroup, seq * 31)).toBe(router.route(hot, hotGroup, seq * 31));
  });

  it('matches a number key by the string the sketch saw, and keeps other keys of the key group whole', () => {
    const numeric = 1234;
    const kg = keyGroupOfKey(numeric, MAXP);
    const r = SplitRouter.fromLayout(layoutOf(n, owners, [{ key: String(numeric), keyGroup: kg, subtasks: [1, 6], weights: [0, 1] }]));
    expect(r.route(numeric, kg, 3)).toBe(6);
    expect(r.route(1235, kg, 3)).toBe(owners[kg]);
    expect(r.holdersOf(numeric, kg)).toEqual([1, 6]);
  });

  it('refuses a layout whose weights or subtasks do not make sense', () => {
    const bad = (s: Partial<typeof split>) => () => SplitRouter.fromLayout(layoutOf(n, owners, [{ ...split, ...s }]));
    expect(bad({ weights: [0.5, 0.5, 0.5] })).toThrow(PartitionerInputError);
    expect(bad({ subtasks: [1, 1, 2] })).toThrow(/distinct/);
    expect(bad({ subtasks: [1, 9, 2] })).toThrow(/distinct and in \[0, 8\)/);
    expect(bad({ subtasks: [1, 2] })).toThrow(/one weight per subtask/);
  });
});

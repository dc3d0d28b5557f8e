import { describe, expect, it } from 'vitest';
import { HeavyHitters } from './heavy-hitters';
import { KeyGroupCounters } from './key-group-counters';
import { mergeHeavyKeysAcrossOperators, mergeHeavyKeysOfOperator } from './heavy-key-merge';
import { seededRandom, zipfSampler } from '@weir/datagen';

describe('mergeHeavyKeysOfOperator', () => {
  it('adds nothing for subtasks that never saw the key group, and sums split keys', () => {
    const merged = mergeHeavyKeysOfOperator(
      [
        {
          heavyKeys: [
            { key: 'hot', keyGroup: 1, count: 50, error: 0 },
            { key: 'a', keyGroup: 2, count: 10, error: 1 },
          ],
          keyGroupCounts: { 1: 50, 2: 12 },
        },
        {
          heavyKeys: [
            { key: 'hot', keyGroup: 1, count: 40, error: 2 },
            { key: 'b', keyGroup: 3, count: 8, error: 0 },
          ],
          keyGroupCounts: { 1: 40, 3: 9 },
        },
      ],
      10,
    );
    expect(merged).toEqual([
      { key: 'hot', keyGroup: 1, count: 90, error: 2 },
      { key: 'a', keyGroup: 2, count: 10, error: 1 },
      { key: 'b', keyGroup: 3, count: 8, error: 0 },
    ]);
  });

  it('bounds an unlisted key by the listing floor and the key-group count (moved key group)', () => {
    const merged = mergeHeavyKeysOfOperator(
      [
        { heavyKeys: [{ key: 'a', keyGroup: 7, count: 30, error: 0 }], keyGroupCounts: { 7: 30 } },
        // Saw 5 records of key group 7 before it moved, but listed only hotter keys (floor 20).
        { heavyKeys: [{ key: 'z', keyGroup: 9, count: 20, error: 0 }], keyGroupCounts: { 7: 5, 9: 20 } },
      ],
      1,
    );
    expect(merged).toEqual([{ key: 'a', keyGroup: 7, count: 35, error: 5 }]);
  });

  it('keeps the error bound for subtask sketches of a Zipf stream', () => {
    const next = zipfSampler(20_000, 1.2, seededRandom(9));
    const truth = new Map<string, number>();
    const subtasks = [0, 1, 2].map(() => ({ sketch: new HeavyHitters(64), groups: new KeyGroupCounters(128) }));
    const random = seededRandom(10);
    for (let i = 0; i < 100_000; i++) {
      const rank = next();
      const key = `k${rank}`;
      const keyGroup = rank % 128;
      // Mostly routed by key group; 10% of records land elsewhere (a key group moving mid-interval).
      const target = random() < 0.1 ? Math.floor(random() * 3) : keyGroup % 3;
      subtasks[target].sketch.offer(key, keyGroup);
      subtasks[target].groups.add(keyGroup);
      truth.set(key, (truth.get(key) ?? 0) + 1);
    }
    const merged = mergeHeavyKeysOfOperator(
      subtasks.map(({ sketch, groups }) => ({ heavyKeys: sketch.top(16), keyGroupCounts: groups.snapshot() })),
      16,
    );
    expect(merged[0].key).toBe('k0');
    for (const heavy of merged) {
      expect(heavy.count).toBeGreaterThanOrEqual(truth.get(heavy.key)!);
      expect(heavy.count - heavy.error).toBeLessThanOrEqual(truth.get(heavy.key)!);
    }
  });
});

describe('mergeHeavyKeysAcrossOperators', () => {
  it('takes the hottest operator per key instead of counting a record once per operator', () => {
    expect(
      mergeHeavyKeysAcrossOperators(
        [
          [{ key: 'a', keyGroup: 1, count: 100, error: 0 }],
          [
            { key: 'a', keyGroup: 1, count: 80, error: 0 },
            { key: 'b', keyGroup: 2, count: 90, error: 3 },
          ],
        ],
        5,
      ),
    ).toEqual([
      { key: 'a', keyGroup: 1, count: 100, error: 0 },
      { key: 'b', keyGroup: 2, count: 90, error: 3 },
    ]);
  });
});

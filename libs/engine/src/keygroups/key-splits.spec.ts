import { describe, expect, it } from 'vitest';
import { KeySplitError, KeySplits } from './key-splits';

describe('KeySplits', () => {
  it('sends a split key to its parts by weight and every other key to its own key group', () => {
    const splits = KeySplits.of([{ key: 'hot', keyGroup: 3, parts: [3, 9, 12], weights: [0.5, 0.25, 0.25] }], 16);
    const counts = new Map<number, number>();
    for (let seq = 0; seq < 4_000; seq++) {
      const kg = splits.route('hot', 3, seq);
      counts.set(kg, (counts.get(kg) ?? 0) + 1);
    }
    expect(counts.get(3)).toBeCloseTo(2_000, -2);
    expect(counts.get(9)).toBeCloseTo(1_000, -2);
    expect(counts.get(12)).toBeCloseTo(1_000, -2);
    expect(splits.route('cold', 3, 1)).toBe(3);
    expect(splits.route('hot', 4, 1)).toBe(4);
    expect(KeySplits.NONE.isEmpty).toBe(true);
  });

  it('matches a number key by its string form, as the sketch names it', () => {
    const splits = KeySplits.of([{ key: '42', keyGroup: 1, parts: [1, 2], weights: [0, 1] }], 4);
    expect(splits.route(42, 1, 0)).toBe(2);
    expect(splits.route('x', 1, 0)).toBe(1);
  });

  it('names what is wrong with a bad split', () => {
    const bad = (parts: number[], weights: number[], keyGroup = 0) => () => KeySplits.of([{ key: 'k', keyGroup, parts, weights }], 8);
    expect(bad([1], [1])).toThrow(/at least two parts/);
    expect(bad([1, 8], [0.5, 0.5])).toThrow(/distinct key groups in \[0, 8\)/);
    expect(bad([1, 2], [0.7, 0.7])).toThrow(/sum to 1/);
    expect(bad([1, 2], [0.5, 0.5], 9)).toThrow(KeySplitError);
    expect(() => KeySplits.of([{ key: 'k', keyGroup: 0, parts: [1, 2], weights: [0.5, 0.5] }, { key: 'k', keyGroup: 0, parts: [3, 4], weights: [0.5, 0.5] }], 8)).toThrow(/twice/);
  });
});

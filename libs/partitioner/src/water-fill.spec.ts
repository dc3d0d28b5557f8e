import { describe, expect, it } from 'vitest';
import { waterFill } from './water-fill';

describe('waterFill', () => {
  it('fills the least loaded subtasks first and ends those that take a part at one level', () => {
    // 90 records/s over subtasks at 10, 40 and 100 (fair 100 each): the level is 70; the third takes nothing.
    const weights = waterFill(90, [10, 40, 100], [100, 100, 100]);
    expect(weights.map((w) => w * 90)).toEqual([60, 30, 0]);
  });

  it('levels utilisation, not load, when capacities differ', () => {
    const weights = waterFill(300, [0, 0], [100, 200]);
    expect(weights[0]).toBeCloseTo(1 / 3, 12);
    expect(weights[1]).toBeCloseTo(2 / 3, 12);
  });

  it('spreads a key without load evenly', () => {
    expect(waterFill(0, [5, 9], [1, 1])).toEqual([0.5, 0.5]);
  });
});

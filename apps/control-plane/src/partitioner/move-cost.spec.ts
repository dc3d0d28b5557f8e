import { describe, expect, it } from 'vitest';
import { measuredMoveOf, moveCostBudget } from './move-cost';

describe('move costs fed back into the budget', () => {
  it('keeps the policy budget without a measured move, or when the latest fitted easily', () => {
    expect(moveCostBudget(null, 16, 1_000)).toMatchObject({ budget: 16, reason: null, latestMove: null });
    expect(moveCostBudget(measuredMoveOf('m1', 0, [{ pauseMs: 5 }, { pauseMs: 40 }]), 16, 1_000)).toMatchObject({ budget: 16, reason: null });
  });

  it('moves as many key groups as the latest move says would fit the allowance', () => {
    const slow = measuredMoveOf('m2', 0, Array.from({ length: 8 }, (_, i) => ({ pauseMs: 300 * (i + 1) })));
    expect(slow).toMatchObject({ keyGroups: 8, worstPauseMs: 2_400 });
    const budget = moveCostBudget(slow, 16, 1_000);
    expect(budget.budget).toBe(3);
    expect(budget.reason).toBe('move budget 3 of 16 key groups: move m2 paused up to 2400 ms over 8 key groups, above the 1000 ms allowed');
  });

  it('never goes below one key group, and grows back once moves are quick', () => {
    expect(moveCostBudget(measuredMoveOf('m3', 0, [{ pauseMs: 5_000 }]), 16, 1_000).budget).toBe(1);
    // After a cut to 3, three key groups that paused 200 ms at worst: 15 fit.
    expect(moveCostBudget(measuredMoveOf('m4', 0, [{ pauseMs: 100 }, { pauseMs: 150 }, { pauseMs: 200 }]), 16, 1_000).budget).toBe(15);
    // Settles: a budget that fits (8 key groups at 900 ms) is kept, with why it is below the policy's.
    expect(moveCostBudget(measuredMoveOf('m5', 0, Array.from({ length: 8 }, () => ({ pauseMs: 900 }))), 16, 1_000)).toMatchObject({ budget: 8, reason: expect.stringContaining('near the 1000 ms allowed') });
  });
});

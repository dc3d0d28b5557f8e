/**
 * Move costs fed back into the partitioner's budget. A move's key groups are released together and handed over back
 * to back by the subtask (apps/worker's key-group mover), so the move's worst pause, the last key group's, grows with
 * the number of key groups it moves. Taking that growth as linear through zero (a conservative reading: a fixed part
 * of the pause counts as per key group), the budget for the next look is the count whose pause would have fitted:
 * ⌊moved × maxMovePauseMs ÷ worstPauseMs⌋, between 1 and the policy's moveBudget. The rule is the same whether the
 * latest move was over or under the allowance, so a budget cut after a slow move grows back once moves are quick, and
 * settles where they fit instead of swinging between the two.
 */

/** Moves older than this are not taken as the cost of moving now (the state, the load and the workers have changed). */
export const MOVE_COST_WINDOW_MS = 3_600_000;

/** The operator's latest move made (DONE) within the window, as its report measured it. */
export interface MeasuredMove {
  readonly moveId: string;
  readonly finishedAtMs: number;
  /** Key groups it handed over. */
  readonly keyGroups: number;
  /** The longest pause of one of them (ms from its release's start to its adoption's end). */
  readonly worstPauseMs: number;
}

export interface MoveCostBudget {
  /** Key groups this look may move. */
  readonly budget: number;
  /** The policy's moveBudget. */
  readonly moveBudget: number;
  readonly maxMovePauseMs: number;
  /** The move it was judged on; null when none was made within the window. */
  readonly latestMove: MeasuredMove | null;
  /** Why the budget is below the policy's, in words; null when it is not. */
  readonly reason: string | null;
}

export function moveCostBudget(latest: MeasuredMove | null, moveBudget: number, maxMovePauseMs: number): MoveCostBudget {
  const base = { moveBudget, maxMovePauseMs, latestMove: latest };
  if (!latest || latest.keyGroups === 0 || latest.worstPauseMs <= 0) return { ...base, budget: moveBudget, reason: null };
  const fits = Math.floor((latest.keyGroups * maxMovePauseMs) / latest.worstPauseMs);
  const budget = Math.max(1, Math.min(moveBudget, fits));
  if (budget >= moveBudget) return { ...base, budget, reason: null };
  const over = latest.worstPauseMs > maxMovePauseMs ? `above the ${maxMovePauseMs} ms allowed` : `near the ${maxMovePauseMs} ms allowed`;
  const reason =
    `move budget ${budget} of ${moveBudget} key groups: move ${latest.moveId} paused up to ${Math.round(latest.worstPauseMs)} ms over ` +
    `${latest.keyGroups} key group${latest.keyGroups === 1 ? '' : 's'}, ${over}`;
  return { ...base, budget, reason };
}

/** The measured move of a DONE move's report: its key groups and their worst pause. */
export function measuredMoveOf(moveId: string, finishedAtMs: number, moved: readonly { readonly pauseMs: number }[]): MeasuredMove {
  return { moveId, finishedAtMs, keyGroups: moved.length, worstPauseMs: moved.reduce((worst, m) => Math.max(worst, m.pauseMs), 0) };
}

/**
 * Key-group moves: one at a time, each taken off the subtask most above its fair load and given to the subtask where
 * it lowers the pair's peak most, until the aim is reached, no move helps, or the decision's budget is spent. One key
 * group per move and a cap per decision is what keeps a move's pause short (Megaphone's lesson: many small migrations
 * rather than one large one); among moves that even the load about as well, the one with less state goes first.
 * Key groups holding a split key stay (their state holds a partial), and so does any key group in its cool-down.
 */
import type { DeclinedAction, KeyGroupMove } from './decision';
import { coolingUntil, fmt, type PlanContext } from './plan-context';
import type { PlanningSheet } from './planning-sheet';

/** What is left of the decision's budget; planMoves spends it. */
export interface MoveBudget {
  moves: number;
  bytes: number;
}

/** Two candidate moves whose peaks differ by less than this (in fair loads) even the load equally well. */
const PEAK_TOLERANCE = 0.005;

interface Candidate {
  readonly keyGroup: number;
  readonly to: number;
  readonly peak: number;
  readonly bytes: number;
  /** The destination's utilisation after the move: among equal peaks, the emptier destination. */
  readonly toAfter: number;
}

export function planMoves(sheet: PlanningSheet, ctx: PlanContext, budget: MoveBudget, moved: Set<number>): { moves: KeyGroupMove[]; declined: DeclinedAction[] } {
  const moves: KeyGroupMove[] = [];
  const declined: DeclinedAction[] = [];
  const reported = new Set<number>();
  while (true) {
    const from = sheet.hottest();
    const peakBefore = sheet.utilization(from);
    if (peakBefore <= ctx.policy.aimBelow) break;
    let best: Candidate | null = null;
    let cooling: Candidate | null = null;
    let overBytes: Candidate | null = null;
    for (let kg = 0; kg < sheet.maxParallelism; kg++) {
      if (sheet.owners[kg] !== from || sheet.splitKeys[kg] > 0 || !(sheet.residual[kg] > 0) || moved.has(kg)) continue;
      const rate = sheet.residual[kg];
      const bytes = sheet.model.stateBytes[kg] ?? 0;
      for (let to = 0; to < sheet.subtasks; to++) {
        if (to === from) continue;
        const toAfter = (sheet.loads[to] + rate) / sheet.fair[to];
        const peak = Math.max((sheet.loads[from] - rate) / sheet.fair[from], toAfter);
        if (!(peak < peakBefore - 1e-9)) continue;
        const candidate = { keyGroup: kg, to, peak, bytes, toAfter };
        if (coolingUntil(ctx, kg) !== null) cooling = better(candidate, cooling);
        else if (bytes > budget.bytes) overBytes = better(candidate, overBytes);
        else best = better(candidate, best);
      }
    }
    if (cooling !== null && !reported.has(cooling.keyGroup) && (best === null || cooling.peak < best.peak - PEAK_TOLERANCE)) {
      reported.add(cooling.keyGroup);
      declined.push({
        action: 'move',
        reason: 'cool-down',
        keyGroup: cooling.keyGroup,
        detail: `moving key group ${cooling.keyGroup} from subtask ${from} to ${cooling.to} would even the load best, but it changed less than the cool-down ago`,
        evidence: { coolingUntilMs: coolingUntil(ctx, cooling.keyGroup) as number, peakBefore, peakAfter: cooling.peak },
      });
    }
    if (best === null) {
      if (overBytes !== null) declined.push(budgetDeclined(overBytes, from, peakBefore, budget, 'bytes'));
      else if (cooling === null) {
        declined.push({
          action: 'move',
          reason: 'no-improving-move',
          detail: `subtask ${from} is at ${fmt(peakBefore)}× its fair load and no key group it owns lowers that by moving (they are too large, split, or moved already)`,
          evidence: { subtask: from, peakBefore },
        });
      }
      break;
    }
    if (budget.moves <= 0) {
      declined.push(budgetDeclined(best, from, peakBefore, budget, 'moves'));
      break;
    }
    const fromLoad = sheet.loads[from];
    const toLoad = sheet.loads[best.to];
    const rate = sheet.residual[best.keyGroup];
    sheet.moveKeyGroup(best.keyGroup, best.to);
    moved.add(best.keyGroup);
    budget.moves -= 1;
    budget.bytes -= best.bytes;
    moves.push({
      keyGroup: best.keyGroup,
      fromSubtask: from,
      toSubtask: best.to,
      reason: `subtask ${from} is at ${fmt(peakBefore)}× its fair load; key group ${best.keyGroup} (${fmt(rate)} records/s) moves to subtask ${best.to} (${fmt(toLoad / sheet.fair[best.to])}× → ${fmt(sheet.utilization(best.to))}×)`,
      evidence: {
        keyGroupRate: rate,
        stateBytes: best.bytes,
        fromLoad,
        fromLoadAfter: sheet.loads[from],
        toLoad,
        toLoadAfter: sheet.loads[best.to],
        fromFairLoad: sheet.fair[from],
        toFairLoad: sheet.fair[best.to],
      },
    });
  }
  return { moves, declined };
}

/**
 * The lower peak; within the tolerance the smaller state, then the emptier destination, then the lower peak, then
 * the one found first (the lower key group and destination).
 */
function better(candidate: Candidate, current: Candidate | null): Candidate {
  if (current === null) return candidate;
  if (candidate.peak < current.peak - PEAK_TOLERANCE) return candidate;
  if (candidate.peak > current.peak + PEAK_TOLERANCE) return current;
  if (candidate.bytes !== current.bytes) return candidate.bytes < current.bytes ? candidate : current;
  if (candidate.toAfter !== current.toAfter) return candidate.toAfter < current.toAfter ? candidate : current;
  return candidate.peak < current.peak ? candidate : current;
}

function budgetDeclined(candidate: Candidate, from: number, peakBefore: number, budget: MoveBudget, spent: 'moves' | 'bytes'): DeclinedAction {
  const what = spent === 'moves' ? 'the decision has made as many moves as its budget allows' : `its ${candidate.bytes} state bytes exceed the ${budget.bytes} left in the budget`;
  return {
    action: 'move',
    reason: 'budget',
    keyGroup: candidate.keyGroup,
    detail: `subtask ${from} is still at ${fmt(peakBefore)}× its fair load; key group ${candidate.keyGroup} would move to subtask ${candidate.to}, but ${what} (the next decision continues)`,
    evidence: { peakBefore, peakAfter: candidate.peak, stateBytes: candidate.bytes, movesLeft: budget.moves, bytesLeft: budget.bytes },
  };
}

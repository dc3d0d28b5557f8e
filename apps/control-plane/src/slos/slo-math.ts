import type { SloEvaluation, SloMinute, SloObjective, SloState } from './slo';
import { MINUTE_MS } from '../metrics/metrics-keys';

/** The short window of the burn rate reported beside the objective's own window. */
export const SHORT_BURN_WINDOW_MINUTES = 5;

/**
 * Evaluates an objective at the close of `atMinute` (epoch ms of its start) over the minutes that closed in the
 * window ending with it. Definitions (docs/slos.md):
 * - a minute is bad when its latency at the objective's percentile exceeds the threshold; minutes without samples
 *   (no data, nothing delivered) count as neither good nor bad;
 * - compliance = good / (good + bad) over the window;
 * - burn rate = (bad / (good + bad)) / (1 − target): 1 spends the budget exactly over the window, above 1 faster;
 *   the same over the last 5 minutes is burnRate5m;
 * - state: NO_DATA without any counted minute, BREACHED when compliance < target, OK otherwise.
 */
export function evaluateSlo(objective: SloObjective, minutes: readonly SloMinute[], atMinute: number): SloEvaluation {
  const window = tally(objective, minutes, atMinute, objective.windowMinutes);
  const short = tally(objective, minutes, atMinute, Math.min(SHORT_BURN_WINDOW_MINUTES, objective.windowMinutes));
  const total = window.good + window.bad;
  if (total === 0) {
    return { state: 'NO_DATA', minute: atMinute, goodMinutes: 0, badMinutes: 0, compliance: null, burnRate: null, burnRate5m: null, errorBudgetRemaining: null };
  }
  const budget = 1 - objective.target;
  const compliance = window.good / total;
  const burnRate = window.bad / total / budget;
  const shortTotal = short.good + short.bad;
  const state: SloState = compliance < objective.target ? 'BREACHED' : 'OK';
  return {
    state,
    minute: atMinute,
    goodMinutes: window.good,
    badMinutes: window.bad,
    compliance,
    burnRate,
    burnRate5m: shortTotal === 0 ? null : short.bad / shortTotal / budget,
    errorBudgetRemaining: 1 - burnRate,
  };
}

/** Minutes in (atMinute − windowMinutes, atMinute], by whether they met the objective. */
function tally(objective: SloObjective, minutes: readonly SloMinute[], atMinute: number, windowMinutes: number): { good: number; bad: number } {
  const from = atMinute - windowMinutes * MINUTE_MS;
  let good = 0;
  let bad = 0;
  for (const minute of minutes) {
    if (minute.minute <= from || minute.minute > atMinute || minute.samples === 0) continue;
    if (minute[objective.percentile] > objective.thresholdMs) bad++;
    else good++;
  }
  return { good, bad };
}

/** The event a change of state records: entering BREACHED is a breach, leaving it for OK a recovery. */
export function transitionEvent(previous: SloState, next: SloState): 'BREACH' | 'RECOVERED' | null {
  if (next === 'BREACHED' && previous !== 'BREACHED') return 'BREACH';
  if (next === 'OK' && previous === 'BREACHED') return 'RECOVERED';
  return null;
}

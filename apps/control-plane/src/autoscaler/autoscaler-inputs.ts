import { LatencyRecorder, MetricsDecodeError, sourceBacklogOf, totalSourceBacklog, type LatencySummary, type SubtaskMetricsSnapshot } from '@weir/metrics';
import type { SloObjective } from '../slos/slo';
import { operatorNeed, operatorRates, sourceDemand, type OperatorNeed, type OperatorRates, type SourceDemand } from './ds2';
import type { SloPressure } from './scaling-proposal';

/** One keyed operator's figures and what the target rate asks of it. */
export interface OperatorFigures {
  readonly rates: OperatorRates;
  readonly need: OperatorNeed;
}

export type AutoscalerFigures =
  | {
      readonly ok: true;
      readonly operators: readonly OperatorFigures[];
      readonly source: SourceDemand;
      /** The snapshots' wall-clock span (earliest fromMs, latest toMs), epoch ms. */
      readonly fromMs: number;
      readonly toMs: number;
    }
  | { readonly ok: false; readonly why: string };

/**
 * The figures one look decides on, from the subtasks' latest fresh snapshots: the keyed operators that follow the
 * run's process count (a keyed stage counts key groups; an operator narrower than the run is not rescaled by it), each
 * with DS2's true rate and its need at the sources' target rate; the Kafka sources' read rate and backlog. Every
 * subtask of those operators must have reported (a missing one would read as idle and halve the demand).
 */
export function autoscalerFigures(
  snapshots: readonly SubtaskMetricsSnapshot[],
  parallelism: Readonly<Record<string, number>>,
  processes: number,
  previousBacklog: { readonly atMs: number; readonly records: number } | null,
  nowMs: number,
  policy: { readonly catchUpMs: number; readonly targetUtilization: number },
): AutoscalerFigures {
  // After a rescale the old layout's snapshots linger until stale: only subtasks the run has count.
  const current = snapshots.filter((s) => s.subtask < (parallelism[s.operatorId] ?? 0));
  const keyed = Object.entries(parallelism)
    .filter(([id, n]) => n === processes && current.some((s) => s.operatorId === id && Object.keys(s.keyGroupCounts).length > 0))
    .map(([id]) => id);
  if (keyed.length === 0) return { ok: false, why: `no keyed operator across the run's ${processes} process${processes === 1 ? '' : 'es'} reported key groups` };
  for (const id of keyed) {
    const reported = new Set(current.filter((s) => s.operatorId === id).map((s) => s.subtask));
    if (reported.size < processes) return { ok: false, why: `operator ${id}: ${processes - reported.size} of ${processes} subtasks have no fresh snapshot` };
  }
  const sources = current.filter((s) => sourceBacklogOf(s) !== null);
  const source = sourceDemand(sources, totalSourceBacklog(sources), previousBacklog, nowMs, policy.catchUpMs);
  const operators = keyed.map((id) => {
    const rates = operatorRates(id, current, processes);
    return { rates, need: operatorNeed(rates, source.scale, policy.targetUtilization) };
  });
  return { ok: true, operators, source, fromMs: Math.min(...current.map((s) => s.fromMs)), toMs: Math.max(...current.map((s) => s.toMs)) };
}

/** The latest interval's event-time latency over every subtask's histogram (those that recorded none add nothing). */
export function latestLatency(snapshots: readonly SubtaskMetricsSnapshot[]): LatencySummary | null {
  const encoded = snapshots.map((s) => s.eventTimeLatency).filter((e) => e !== '');
  if (encoded.length === 0) return null;
  try {
    const summary = LatencyRecorder.summarize(encoded);
    return summary.count > 0 ? summary : null;
  } catch (err) {
    // A histogram that does not decode is no latency figure; the rest of the look stands.
    if (err instanceof MetricsDecodeError) return null;
    throw err;
  }
}

/** A deployment's SLO as the autoscaler reads it: the objective and its own latest evaluation. */
export interface SloOfDeployment extends Pick<SloObjective, 'percentile' | 'thresholdMs'> {
  readonly id: string;
  readonly name: string;
  readonly state: string;
  readonly burnRate: number | null;
}

/** The tightest of the deployment's SLOs (latency nearest its threshold), under pressure above `fraction` of it. */
export function sloPressure(slos: readonly SloOfDeployment[], latency: LatencySummary | null, fraction: number): SloPressure | null {
  let tightest: SloPressure | null = null;
  let tightestRatio = -1;
  for (const slo of slos) {
    const latencyMs = latency ? latency[slo.percentile] : null;
    const ratio = latencyMs === null ? 0 : latencyMs / slo.thresholdMs;
    if (ratio <= tightestRatio) continue;
    tightestRatio = ratio;
    tightest = { sloId: slo.id, name: slo.name, percentile: slo.percentile, thresholdMs: slo.thresholdMs, latencyMs, state: slo.state, burnRate: slo.burnRate, pressure: latencyMs !== null && latencyMs > fraction * slo.thresholdMs };
  }
  return tightest;
}

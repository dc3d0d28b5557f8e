import { summarizeJob, type HeavyKey, type SubtaskMetricsSnapshot } from '@weir/metrics';

/** Heavy keys pushed with each update; the job summary keeps more, subscribers want the head. */
export const PUSHED_HEAVY_KEYS = 10;

/** Event-time latency of the interval, in milliseconds. */
export interface LatencyFigures {
  readonly samples: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
}

/**
 * One deployment's figures, merged from the latest snapshot of each of its subtasks (jobId = deployment id). What
 * the `deploymentMetrics` subscription pushes and the Redis `metrics` channel carries, as JSON.
 */
export interface DeploymentMetrics {
  readonly tenantId: string;
  readonly deploymentId: string;
  /** Epoch ms when the control plane merged the snapshots. */
  readonly at: number;
  /** The wall-clock span the merged snapshots cover (earliest fromMs, latest toMs). */
  readonly fromMs: number;
  readonly toMs: number;
  readonly subtasks: number;
  readonly recordsInPerSec: number;
  readonly recordsOutPerSec: number;
  readonly busyMsPerSec: { readonly max: number; readonly mean: number };
  readonly backpressuredMsPerSec: { readonly max: number; readonly mean: number };
  readonly eventTimeLatency: LatencyFigures;
  readonly watermarkLagMs: number | null;
  readonly heavyKeys: readonly HeavyKey[];
  readonly deadLettered: number;
}

/** Merges the latest snapshots of one job (all of the same tenant and job; at least one) with summarizeJob. */
export function toDeploymentMetrics(snapshots: readonly SubtaskMetricsSnapshot[], at: number): DeploymentMetrics {
  const summary = summarizeJob(snapshots, { heavyKeys: PUSHED_HEAVY_KEYS });
  let fromMs = Infinity;
  let toMs = -Infinity;
  for (const s of snapshots) {
    if (s.fromMs < fromMs) fromMs = s.fromMs;
    if (s.toMs > toMs) toMs = s.toMs;
  }
  const latency = summary.eventTimeLatency;
  return {
    tenantId: summary.tenantId,
    deploymentId: summary.jobId,
    at,
    fromMs,
    toMs,
    subtasks: snapshots.length,
    recordsInPerSec: summary.recordsInPerSec,
    recordsOutPerSec: summary.recordsOutPerSec,
    busyMsPerSec: summary.busyMsPerSec,
    backpressuredMsPerSec: summary.backpressuredMsPerSec,
    eventTimeLatency: { samples: latency.count, p50: latency.p50, p95: latency.p95, p99: latency.p99, max: latency.max },
    watermarkLagMs: summary.watermarkLagMs,
    heavyKeys: summary.heavyKeys,
    deadLettered: summary.deadLettered,
  };
}

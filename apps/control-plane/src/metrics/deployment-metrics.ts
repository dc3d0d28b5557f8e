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
  /** The job's throughput: records entering it at its sources (jobInputOperators), not every stage's input summed. */
  readonly recordsInPerSec: number;
  readonly recordsOutPerSec: number;
  readonly busyMsPerSec: { readonly max: number; readonly mean: number };
  readonly backpressuredMsPerSec: { readonly max: number; readonly mean: number };
  readonly eventTimeLatency: LatencyFigures;
  readonly watermarkLagMs: number | null;
  readonly heavyKeys: readonly HeavyKey[];
  readonly deadLettered: number;
  /** Records behind the log end over the Kafka source subtasks (what the autoscaler drains); null when none reports one. */
  readonly sourceBacklog: number | null;
}

/**
 * The operators whose records in are the job's input: its sources. A snapshot does not say its operator's kind, but
 * the engine counts key groups exactly where keyed records enter a subtask (a keyed stage reading its exchange, in
 * memory or over Kafka from another process), and a source subtask never counts one. So an operator none of whose
 * subtasks saw a key group in the interval reads from outside the job. A keyed operator that received nothing in
 * the interval is counted with them and adds its zero; whichever workers and processes the subtasks came from,
 * each is one snapshot here. When every operator saw key groups (no source snapshot is fresh: a source still
 * starting, or snapshots of a test's keyed operator alone), every operator counts, as summarizeJob's default.
 */
export function jobInputOperators(snapshots: readonly SubtaskMetricsSnapshot[]): string[] {
  const keyed = new Set<string>();
  const all = new Set<string>();
  for (const s of snapshots) {
    all.add(s.operatorId);
    if (Object.keys(s.keyGroupCounts).length > 0) keyed.add(s.operatorId);
  }
  const sources = [...all].filter((id) => !keyed.has(id));
  return sources.length > 0 ? sources : [...all];
}

/**
 * Merges the latest snapshots of one job (all of the same tenant and job; at least one) with summarizeJob: every
 * subtask of every process, on whichever worker it runs, is one snapshot (the store keeps one per operator and
 * subtask). Records in/s counts the job's sources only (a three-stage job would otherwise read three times its rate).
 */
export function toDeploymentMetrics(snapshots: readonly SubtaskMetricsSnapshot[], at: number): DeploymentMetrics {
  const summary = summarizeJob(snapshots, { heavyKeys: PUSHED_HEAVY_KEYS, sourceOperators: jobInputOperators(snapshots) });
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
    sourceBacklog: summary.sourceBacklog,
  };
}

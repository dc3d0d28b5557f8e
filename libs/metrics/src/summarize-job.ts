import type { JobMetricsSummary, SubtaskMetricsSnapshot } from './contract';
import { MetricsArgumentError } from './errors';
import { mergeHeavyKeysAcrossOperators, mergeHeavyKeysOfOperator } from './heavy-key-merge';
import { LatencyRecorder } from './latency-recorder';
import { totalSourceBacklog } from './source-backlog';

export interface JobSummaryOptions {
  /** Operators whose records in are the job's input. Default: every operator (right for single-operator jobs). */
  readonly sourceOperators?: readonly string[];
  /**
   * Operators whose records out are the job's output, and whose latency histograms are merged.
   * Default: every operator (subtasks that record no latency contribute empty histograms).
   */
  readonly sinkOperators?: readonly string[];
  /** Heavy keys kept in the summary. Default 32. */
  readonly heavyKeys?: number;
}

/** Per-operator sums, for callers that want to pick the rates themselves. */
export interface OperatorMetricsSummary {
  readonly operatorId: string;
  readonly subtasks: number;
  readonly recordsInPerSec: number;
  readonly recordsOutPerSec: number;
  readonly busyMsPerSec: { readonly max: number; readonly mean: number };
  readonly backpressuredMsPerSec: { readonly max: number; readonly mean: number };
  readonly deadLettered: number;
  /** Records behind the log end over the operator's Kafka source subtasks; null when none reported a backlog. */
  readonly sourceBacklog: number | null;
}

/**
 * Merges the latest snapshot of every subtask of one job:
 * - records in/s = sum over the source operators' subtasks; records out/s = sum over the sink operators' subtasks;
 * - busy and backpressured ms/s: max and mean over all subtasks (the max finds the bottleneck);
 * - latency: the sink subtasks' HDR histograms merged, then summarised (never an average of percentiles);
 * - watermark lag: the largest lag of any subtask (the job's watermark is the minimum), null if none has one;
 * - heavy keys: merged per operator, then the hottest operator's estimate per key (see heavy-key-merge.ts);
 * - dead-lettered: the sum;
 * - source backlog: the sum over subtasks that report one (Kafka sources), null when none does.
 */
export function summarizeJob(
  snapshots: readonly SubtaskMetricsSnapshot[],
  options: JobSummaryOptions = {},
): JobMetricsSummary {
  if (snapshots.length === 0) throw new MetricsArgumentError('summarizeJob needs at least one snapshot');
  const { tenantId, jobId } = snapshots[0];
  for (const snapshot of snapshots) {
    if (snapshot.tenantId !== tenantId || snapshot.jobId !== jobId) {
      throw new MetricsArgumentError(
        `snapshots of different jobs: ${tenantId}/${jobId} and ${snapshot.tenantId}/${snapshot.jobId}`,
      );
    }
  }
  const isSource = roleFilter(options.sourceOperators);
  const isSink = roleFilter(options.sinkOperators);
  const sinks = snapshots.filter((snapshot) => isSink(snapshot.operatorId));

  let watermarkLagMs: number | null = null;
  for (const snapshot of snapshots) {
    const lag = snapshot.watermarkLagMs;
    if (lag !== null && (watermarkLagMs === null || lag > watermarkLagMs)) watermarkLagMs = lag;
  }

  const byOperator = groupByOperator(snapshots);
  const heavyKeys = options.heavyKeys ?? 32;
  return {
    tenantId,
    jobId,
    recordsInPerSec: sum(snapshots.filter((s) => isSource(s.operatorId)).map((s) => s.recordsInPerSec)),
    recordsOutPerSec: sum(sinks.map((s) => s.recordsOutPerSec)),
    busyMsPerSec: maxAndMean(snapshots.map((s) => s.busyMsPerSec)),
    backpressuredMsPerSec: maxAndMean(snapshots.map((s) => s.backpressuredMsPerSec)),
    eventTimeLatency: LatencyRecorder.summarize(sinks.map((s) => s.eventTimeLatency)),
    processingLatency: LatencyRecorder.summarize(sinks.map((s) => s.processingLatency)),
    watermarkLagMs,
    heavyKeys: mergeHeavyKeysAcrossOperators(
      [...byOperator.values()].map((subtasks) => mergeHeavyKeysOfOperator(subtasks, heavyKeys)),
      heavyKeys,
    ),
    deadLettered: sum(snapshots.map((s) => s.deadLettered)),
    sourceBacklog: totalSourceBacklog(snapshots),
  };
}

/** Sums and extremes per operator, in first-seen order. */
export function summarizeOperators(snapshots: readonly SubtaskMetricsSnapshot[]): OperatorMetricsSummary[] {
  return [...groupByOperator(snapshots)].map(([operatorId, subtasks]) => ({
    operatorId,
    subtasks: subtasks.length,
    recordsInPerSec: sum(subtasks.map((s) => s.recordsInPerSec)),
    recordsOutPerSec: sum(subtasks.map((s) => s.recordsOutPerSec)),
    busyMsPerSec: maxAndMean(subtasks.map((s) => s.busyMsPerSec)),
    backpressuredMsPerSec: maxAndMean(subtasks.map((s) => s.backpressuredMsPerSec)),
    deadLettered: sum(subtasks.map((s) => s.deadLettered)),
    sourceBacklog: totalSourceBacklog(subtasks),
  }));
}

function roleFilter(operators: readonly string[] | undefined): (operatorId: string) => boolean {
  if (operators === undefined) return () => true;
  const set = new Set(operators);
  return (operatorId) => set.has(operatorId);
}

function groupByOperator(snapshots: readonly SubtaskMetricsSnapshot[]): Map<string, SubtaskMetricsSnapshot[]> {
  const groups = new Map<string, SubtaskMetricsSnapshot[]>();
  for (const snapshot of snapshots) {
    const group = groups.get(snapshot.operatorId);
    if (group === undefined) groups.set(snapshot.operatorId, [snapshot]);
    else group.push(snapshot);
  }
  return groups;
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}

function maxAndMean(values: readonly number[]): { max: number; mean: number } {
  if (values.length === 0) return { max: 0, mean: 0 };
  let max = -Infinity;
  for (const value of values) if (value > max) max = value;
  return { max, mean: sum(values) / values.length };
}

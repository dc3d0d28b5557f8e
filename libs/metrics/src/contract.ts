/**
 * Metrics the engine records per subtask and the control plane merges per deployment. The engine owns this shape;
 * libs/metrics implements it. Snapshots are plain JSON so they travel over BullMQ/Redis and merge anywhere.
 *
 * Cost rule: recording is synchronous, allocation-free on the hot path, and O(1) per record or per batch.
 */

/** Identity travels with every snapshot. */
export interface SubtaskIdentity {
  readonly tenantId: string;
  readonly jobId: string;
  readonly operatorId: string;
  readonly subtask: number;
}

export interface HeavyKey {
  /** The key as a printable string (utf-8, or hex when not printable). */
  readonly key: string;
  readonly keyGroup: number;
  /** Estimated count in the snapshot's interval (space-saving upper bound) and its error bound. */
  readonly count: number;
  readonly error: number;
}

export interface SubtaskMetricsSnapshot extends SubtaskIdentity {
  /** Wall-clock interval the rates and counts cover. */
  readonly fromMs: number;
  readonly toMs: number;
  readonly recordsIn: number;
  readonly recordsOut: number;
  readonly recordsInPerSec: number;
  readonly recordsOutPerSec: number;
  /** Milliseconds per second spent processing, blocked on downstream, and waiting for input; they sum to ~1000. */
  readonly busyMsPerSec: number;
  readonly backpressuredMsPerSec: number;
  readonly idleMsPerSec: number;
  /** Event-time latency (event timestamp → handed to the sink), an HDR histogram encoded as base64. */
  readonly eventTimeLatency: string;
  /** Processing-time latency (ingestion → handed to the sink), encoded likewise. */
  readonly processingLatency: string;
  /** Records per key group in the interval; only key groups this subtask saw. */
  readonly keyGroupCounts: Readonly<Record<number, number>>;
  readonly heavyKeys: readonly HeavyKey[];
  /** Wall clock minus the current watermark, ms; null before the first watermark. */
  readonly watermarkLagMs: number | null;
  readonly deadLettered: number;
  /**
   * A Kafka source subtask's records behind the log end when the snapshot was taken, summed over the partitions it
   * reads (the autoscaler's backlog to drain); null for other subtasks and other sources. Snapshots from before the
   * field existed lack it: readers take a missing one as null (`sourceBacklogOf`).
   */
  readonly sourceBacklog: number | null;
  /**
   * A splittable window's subtask: the hot keys its process splits now (the engine's KeySplit: the key as the sketch
   * names it, its own key group, the key groups its records go to and their weights); absent for other operators.
   * Empty when nothing is split. A restore starts with none, so this is what the run really does.
   */
  readonly keySplits?: readonly ReportedKeySplit[];
  /**
   * The subtask runs an event-time window operator: its key groups are not moved live between processes (a key
   * group's records read behind the adopter's event time would be dropped as late; docs/partitioner.md).
   */
  readonly windows?: true;
}

export interface ReportedKeySplit {
  readonly key: string;
  readonly keyGroup: number;
  readonly parts: readonly number[];
  readonly weights: readonly number[];
}

/** Latency percentiles and max in milliseconds (µs resolution, 3 significant digits), and the sample count. */
export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
}

/** What a whole job (all subtasks of all operators) looks like, merged from snapshots. */
export interface JobMetricsSummary {
  readonly tenantId: string;
  readonly jobId: string;
  readonly recordsInPerSec: number;
  readonly recordsOutPerSec: number;
  readonly busyMsPerSec: { readonly max: number; readonly mean: number };
  readonly backpressuredMsPerSec: { readonly max: number; readonly mean: number };
  readonly eventTimeLatency: LatencySummary;
  readonly processingLatency: LatencySummary;
  readonly watermarkLagMs: number | null;
  readonly heavyKeys: readonly HeavyKey[];
  readonly deadLettered: number;
  /** Records behind the log end over every Kafka source subtask; null when none reported a backlog. */
  readonly sourceBacklog: number | null;
}

import type { HeavyKey, SubtaskIdentity, SubtaskMetricsSnapshot } from './contract';
import { HeavyHitters } from './heavy-hitters';
import { KeyGroupCounters } from './key-group-counters';
import { LatencyRecorder } from './latency-recorder';
import { RateCounter } from './rate-counter';
import { TimeAccounting, type ActivityState } from './time-accounting';

export interface SubtaskMetricsOptions {
  readonly identity: SubtaskIdentity;
  /** The job's number of key groups. */
  readonly maxParallelism: number;
  /** Start of the first interval (epoch ms, the same clock later calls use). */
  readonly nowMs: number;
  /** Counters in the heavy-hitters sketch; keys above (records in interval ÷ capacity) are always caught. */
  readonly heavyHitterCapacity?: number;
  /** Heavy keys a snapshot carries. */
  readonly heavyKeysReported?: number;
  readonly initialState?: ActivityState;
}

export const DEFAULT_HEAVY_HITTER_CAPACITY = 512;
export const DEFAULT_HEAVY_KEYS_REPORTED = 32;

/**
 * Everything one subtask measures, recorded synchronously from the engine's batch loop, and turned into a
 * `SubtaskMetricsSnapshot` once per reporting interval. Timestamps are epoch ms from one clock (Date.now(), or
 * performance.timeOrigin + performance.now() for sub-ms precision).
 *
 * Not thread-safe and not shared: one instance per subtask, owned by the subtask's loop. Call `close()` when the
 * subtask stops (it frees the histograms' WebAssembly memory).
 */
export class SubtaskMetrics {
  readonly identity: SubtaskIdentity;
  private readonly recordsIn: RateCounter;
  private readonly recordsOut: RateCounter;
  private readonly deadLetters: RateCounter;
  private readonly time: TimeAccounting;
  private readonly eventTimeLatency = new LatencyRecorder();
  private readonly processingLatency = new LatencyRecorder();
  private readonly heavyHitters: HeavyHitters;
  private readonly keyGroups: KeyGroupCounters;
  private readonly heavyKeysReported: number;
  private intervalStartMs: number;

  constructor(options: SubtaskMetricsOptions) {
    this.identity = Object.freeze({
      tenantId: options.identity.tenantId,
      jobId: options.identity.jobId,
      operatorId: options.identity.operatorId,
      subtask: options.identity.subtask,
    });
    this.intervalStartMs = options.nowMs;
    this.recordsIn = new RateCounter(options.nowMs);
    this.recordsOut = new RateCounter(options.nowMs);
    this.deadLetters = new RateCounter(options.nowMs);
    this.time = new TimeAccounting(options.nowMs, options.initialState ?? 'idle');
    this.heavyHitters = new HeavyHitters(options.heavyHitterCapacity ?? DEFAULT_HEAVY_HITTER_CAPACITY);
    this.keyGroups = new KeyGroupCounters(options.maxParallelism);
    this.heavyKeysReported = options.heavyKeysReported ?? DEFAULT_HEAVY_KEYS_REPORTED;
  }

  /** A batch of n records was taken in (from the source or from upstream). */
  onBatchIn(n: number): void {
    this.recordsIn.add(n);
  }

  /** A batch of n records was emitted (to the sink or downstream). */
  onBatchOut(n: number): void {
    this.recordsOut.add(n);
  }

  /** n records were routed to the dead-letter topic. */
  onDeadLetter(n: number): void {
    this.deadLetters.add(n);
  }

  /** The subtask moved to another state at nowMs (see TimeAccounting). */
  enter(state: ActivityState, nowMs: number): void {
    this.time.enter(state, nowMs);
  }

  /**
   * Latencies of records handed to the sink at nowMs: event-time latency from eventTimestamps[i], processing
   * latency from ingestTimes[i] (when given). Pass [from, to) to record part of a reused buffer.
   */
  recordLatencies(
    eventTimestamps: ArrayLike<number>,
    ingestTimes: ArrayLike<number> | null,
    nowMs: number,
    from = 0,
    to = eventTimestamps.length,
  ): void {
    for (let i = from; i < to; i++) this.eventTimeLatency.record(nowMs - eventTimestamps[i]);
    if (ingestTimes !== null) {
      for (let i = from; i < to; i++) this.processingLatency.record(nowMs - ingestTimes[i]);
    }
  }

  /** One record's latencies (for callers without arrays at hand). */
  recordLatency(eventTimestampMs: number, ingestTimeMs: number | null, nowMs: number): void {
    this.eventTimeLatency.record(nowMs - eventTimestampMs);
    if (ingestTimeMs !== null) this.processingLatency.record(nowMs - ingestTimeMs);
  }

  /** A record with this key (printable, see `printableKey`) in this key group: feeds heavy hitters and key-group load. */
  offerKey(key: string, keyGroup: number, count = 1): void {
    this.keyGroups.add(keyGroup, count);
    this.heavyHitters.offer(key, keyGroup, count);
  }

  /** offerKey for keys[i] / keyGroups[i], i in [from, to). */
  offerKeys(keys: readonly string[], keyGroups: ArrayLike<number>, from = 0, to = keys.length): void {
    for (let i = from; i < to; i++) {
      this.keyGroups.add(keyGroups[i], 1);
      this.heavyHitters.offer(keys[i], keyGroups[i], 1);
    }
  }

  /**
   * Closes the interval at nowMs, returns what it saw, and starts the next one. `watermarkMs` is the subtask's
   * current watermark (null before the first one); its lag is nowMs − watermark.
   */
  snapshot(nowMs: number, watermarkMs: number | null): SubtaskMetricsSnapshot {
    const recordsIn = this.recordsIn.take(nowMs);
    const recordsOut = this.recordsOut.take(nowMs);
    const deadLettered = this.deadLetters.take(nowMs);
    const time = this.time.take(nowMs);
    const heavyKeys: HeavyKey[] = this.heavyHitters.top(this.heavyKeysReported);
    const snapshot: SubtaskMetricsSnapshot = {
      ...this.identity,
      fromMs: this.intervalStartMs,
      toMs: nowMs,
      recordsIn: recordsIn.count,
      recordsOut: recordsOut.count,
      recordsInPerSec: recordsIn.perSec,
      recordsOutPerSec: recordsOut.perSec,
      busyMsPerSec: time.busyMsPerSec,
      backpressuredMsPerSec: time.backpressuredMsPerSec,
      idleMsPerSec: time.idleMsPerSec,
      eventTimeLatency: this.eventTimeLatency.encode(),
      processingLatency: this.processingLatency.encode(),
      keyGroupCounts: this.keyGroups.snapshot(),
      heavyKeys,
      watermarkLagMs: watermarkMs === null ? null : nowMs - watermarkMs,
      deadLettered: deadLettered.count,
    };
    this.eventTimeLatency.reset();
    this.processingLatency.reset();
    this.heavyHitters.reset();
    this.keyGroups.reset();
    this.intervalStartMs = nowMs;
    return snapshot;
  }

  /** Frees the histograms. The object is unusable afterwards. */
  close(): void {
    this.eventTimeLatency.destroy();
    this.processingLatency.destroy();
  }
}

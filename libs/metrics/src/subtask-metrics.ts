import type { HeavyKey, SubtaskIdentity, SubtaskMetricsSnapshot } from './contract';
import { MetricsArgumentError } from './errors';
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
  /**
   * Records of each interval whose keys all go to the heavy-hitters sketch before sampling starts (exact counts for
   * light streams and tests).
   */
  readonly heavyKeyExactRecords?: number;
  /** Beyond those, one record in this many (on average) goes to the sketch, weighted by it; 1 offers every record. */
  readonly heavyKeySampling?: number;
  readonly initialState?: ActivityState;
}

export const DEFAULT_HEAVY_HITTER_CAPACITY = 512;
export const DEFAULT_HEAVY_KEYS_REPORTED = 32;
export const DEFAULT_HEAVY_KEY_EXACT_RECORDS = 4_096;
export const DEFAULT_HEAVY_KEY_SAMPLING = 16;

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
  private readonly exactRecords: number;
  private readonly sampling: number;
  /** Records the current interval may still offer exactly. */
  private exactLeft: number;
  /** Records until the next sampled one (sampling phase). */
  private untilSample: number;
  private random: number;
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
    this.exactRecords = options.heavyKeyExactRecords ?? DEFAULT_HEAVY_KEY_EXACT_RECORDS;
    this.sampling = options.heavyKeySampling ?? DEFAULT_HEAVY_KEY_SAMPLING;
    if (!Number.isInteger(this.sampling) || this.sampling < 1 || !Number.isInteger(this.exactRecords) || this.exactRecords < 0) {
      throw new MetricsArgumentError(`heavy-key sampling must be an integer ≥ 1 and exact records an integer ≥ 0, got ${this.sampling} / ${this.exactRecords}`);
    }
    this.exactLeft = this.exactRecords;
    // Seeded per subtask: runs are repeatable, and subtasks do not sample in lockstep.
    this.random = (Math.imul(options.identity.subtask + 1, 0x9e3779b1) ^ 0x5bd1e995) >>> 0 || 1;
    this.untilSample = this.nextStride();
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

  /** `count` records with the same event timestamp and ingestion time, handed to the sink together (a window firing). */
  recordLatencyRun(eventTimestampMs: number, ingestTimeMs: number | null, nowMs: number, count: number): void {
    this.eventTimeLatency.recordWithCount(nowMs - eventTimestampMs, count);
    if (ingestTimeMs !== null) this.processingLatency.recordWithCount(nowMs - ingestTimeMs, count);
  }

  /**
   * `count` records with this key (printable, see `printableKey`) in this key group. Key-group load is counted
   * exactly. The heavy-hitters sketch gets every record for the first `heavyKeyExactRecords` of an interval, then a
   * sample: sample points fall every `heavyKeySampling` records on average (random strides, so no periodic pattern
   * in the input can alias with them) and each carries that weight, so a key's expected estimate is its true count.
   * A key with true count c past the exact prefix is estimated within about ±sqrt(c · sampling) (one standard
   * deviation: ±4% at c = 10,000 with the default 16), on top of the sketch's own `error` bound — so heavy keys'
   * `count − error ≤ true ≤ count` holds only up to that sampling error. Measured in subtask-metrics.spec.ts.
   */
  offerKey(key: string, keyGroup: number, count = 1): void {
    this.keyGroups.add(keyGroup, count);
    if (!(count > 0)) return;
    if (this.exactLeft > 0) {
      this.exactLeft -= count;
      this.heavyHitters.offer(key, keyGroup, count);
      return;
    }
    this.untilSample -= count;
    if (this.untilSample > 0) return;
    let weight = 0;
    while (this.untilSample <= 0) {
      weight += this.sampling;
      this.untilSample += this.nextStride();
    }
    this.heavyHitters.offer(key, keyGroup, weight);
  }

  /** offerKey for keys[i] / keyGroups[i], i in [from, to). */
  offerKeys(keys: readonly string[], keyGroups: ArrayLike<number>, from = 0, to = keys.length): void {
    for (let i = from; i < to; i++) this.offerKey(keys[i], keyGroups[i], 1);
  }

  /** Uniform in [1, 2·sampling − 1]: mean `sampling` (xorshift32). */
  private nextStride(): number {
    if (this.sampling === 1) return 1;
    let x = this.random;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.random = x >>> 0;
    return 1 + (this.random % (2 * this.sampling - 1));
  }

  /**
   * Closes the interval at nowMs, returns what it saw, and starts the next one. `watermarkMs` is the subtask's
   * current watermark (null before the first one); its lag is nowMs − watermark. `sourceBacklog` is what a Kafka
   * source subtask is behind the log end now (the engine reads it off its reader); null for every other subtask.
   */
  snapshot(nowMs: number, watermarkMs: number | null, sourceBacklog: number | null = null): SubtaskMetricsSnapshot {
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
      sourceBacklog,
    };
    this.eventTimeLatency.reset();
    this.processingLatency.reset();
    this.heavyHitters.reset();
    this.exactLeft = this.exactRecords;
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

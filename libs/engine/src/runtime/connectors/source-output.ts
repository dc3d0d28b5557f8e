import type { EventTimeOptions } from '../../sdk/connectors';
import { sendToDeadLetters, type ChainEnvLike } from '../ports';
import type { InputQueue } from '../queue';
import type { StreamRecord } from '../records';
import { SourceWatermarks } from '../watermarks';

/**
 * One partition's batch as parallel arrays (value i was read at timestamps[i], from raws[i]): a source hands over
 * its batch without building an object per record.
 */
export interface SourceBatch {
  readonly values: readonly unknown[];
  /** Kafka record timestamp / generator scheduled time, used when the spec has no timestamp assigner. */
  readonly timestamps: readonly number[];
  /** Kafka: each value's undecoded bytes (dead letters, byte-keyed routing). */
  readonly raws?: readonly Buffer[];
}

/** Builds the keyed record of a source value (a keyBy fused with its source; see KeyByTerminal.route). */
export interface SourceRouter {
  route(value: unknown, timestamp: number, ingestMs: number, raw: Buffer | undefined): StreamRecord | undefined;
}

/**
 * What every source subtask shares: assigns event time, tracks per-partition watermarks (bounded out-of-orderness,
 * idleness) and offers batches to the subtask's input queue.
 */
export class SourceOutput {
  private readonly watermarks: SourceWatermarks | null;

  constructor(
    private readonly operatorId: string,
    private readonly queue: InputQueue,
    private readonly spec: EventTimeOptions<unknown>,
    partitions: readonly number[],
    private readonly env: ChainEnvLike,
    /** Set when a keyBy is the only reader of this source: records are built keyed, once. */
    private readonly router?: SourceRouter,
  ) {
    const wm = spec.watermarks;
    this.watermarks = wm ? new SourceWatermarks(wm.maxOutOfOrdernessMs, wm.idleTimeoutMs, partitions, env.clock.now()) : null;
  }

  /** Offers one partition's batch, then any watermark it allows. Resolves when the queue has room again. */
  emit(partition: number, batch: SourceBatch, positions?: Readonly<Record<string, string>>): Promise<void> {
    const now = this.env.clock.now();
    const { values, timestamps, raws } = batch;
    const assign = this.spec.timestamps;
    const router = this.router;
    // Sized once (most batches keep every value); trimmed below when some were dead-lettered.
    const records = new Array<StreamRecord>(values.length);
    let kept = 0;
    /** Values whose key selector threw (dead-lettered by the router): read from the source all the same. */
    let unkeyed = 0;
    // The batch's highest timestamp goes to the watermark tracker once per batch, not per record.
    let maxTimestamp = Number.NEGATIVE_INFINITY;
    let observed = false;
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      const raw = raws?.[i];
      let timestamp = timestamps[i];
      if (assign) {
        try {
          timestamp = assign(value, timestamp);
        } catch (err) {
          this.deadLetter({ value, raw, sourceTimestamp: timestamps[i] }, err);
          continue;
        }
      }
      observed = true;
      if (timestamp > maxTimestamp) maxTimestamp = timestamp;
      if (router === undefined) {
        records[kept++] = { value, timestamp, ingestMs: now, raw };
        continue;
      }
      const routed = router.route(value, timestamp, now, raw);
      if (routed === undefined) unkeyed++;
      else records[kept++] = routed;
    }
    if (kept < records.length) records.length = kept;
    if (observed) this.watermarks?.observe(partition, maxTimestamp, now);
    if (records.length + unkeyed > 0) this.env.metrics.onBatchIn(records.length + unkeyed);
    if (records.length > 0) this.queue.offer({ kind: 'data', channel: 0, records, positions });
    else if (unkeyed > 0) this.wakeForDeadLetters();
    this.tick();
    return this.queue.writable();
  }

  /** Wakes the subtask so dead letters of an all-poison batch are written. */
  wakeForDeadLetters(): void {
    this.queue.offer({ kind: 'data', channel: 0, records: [] });
  }

  /** Re-evaluates the watermark (idleness depends on processing time passing without records). */
  tick(): void {
    const next = this.watermarks?.poll(this.env.clock.now());
    if (next === 'idle') this.queue.offer({ kind: 'idle', channel: 0 });
    else if (typeof next === 'number') this.queue.offer({ kind: 'watermark', channel: 0, watermark: next });
  }

  /**
   * A live rescale moved a partition here: its event time continues from the old owner's highest timestamp, and the
   * watermark that allows goes out at once, ahead of the partition's first records here.
   */
  addPartition(partition: number, maxTimestamp: number | null): void {
    this.watermarks?.add(partition, maxTimestamp, this.env.clock.now());
    this.tick();
  }

  /** A partition moved away: it no longer holds this subtask's watermark back. Returns its highest timestamp seen. */
  removePartition(partition: number): number | null {
    const max = this.watermarks?.remove(partition) ?? null;
    this.tick();
    return max;
  }

  /** An explicit watermark (test driver). */
  watermark(watermark: number): void {
    this.queue.offer({ kind: 'watermark', channel: 0, watermark });
  }

  barrier(checkpointId: number, sourcePositions: Readonly<Record<string, string>>): void {
    this.queue.offer({ kind: 'barrier', checkpointId, channel: 0, lane: 'data', sourcePositions });
  }

  end(): void {
    this.queue.offer({ kind: 'end', channel: 0, lane: 'data' });
  }

  deadLetter(input: { value?: unknown; raw?: Buffer; sourceTimestamp: number }, err: unknown, reason: 'decode' | 'user-function' = 'user-function'): void {
    sendToDeadLetters(this.env, { operatorId: this.operatorId, reason, error: err }, input.value, input.raw, input.sourceTimestamp);
  }
}

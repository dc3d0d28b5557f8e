/**
 * Operators chained inside one subtask (forward edges): stateless transforms, and the terminals a chain ends in —
 * sinks, keyed exchanges and broadcast exchanges. `push` is synchronous; terminals buffer what they receive and the
 * subtask awaits `emit()` once per input batch, so I/O happens per batch, never per record.
 */
import { keyGroupOfKey, type KeySplits, type KeyValue } from '../keygroups';
import type { SinkWriter } from './connectors/sink-writers';
import type { BroadcastSender, KeyedSender } from './exchange/exchange';
import { sendToDeadLetters, type ChainEnvLike } from './ports';
import { type KeyedRecord, RoutedRecord, type StreamRecord } from './records';

export interface ChainNode {
  push(records: readonly StreamRecord[]): void;
}

export interface ChainTerminal {
  /** Hands on what it holds (a sink write, an exchange send). `positions`: those of the source batch it came from. */
  emit(positions?: Readonly<Record<string, string>>): Promise<void>;
  onWatermark(watermark: number): Promise<void>;
  onIdle(): Promise<void>;
  onEnd(): Promise<void>;
  /** Forwards a checkpoint barrier downstream (after the subtask emitted its outputs and snapshotted). */
  onBarrier(checkpointId: number): Promise<void>;
}

export type ChainEnv = ChainEnvLike;

type StatelessKind = 'map' | 'filter' | 'flatMap';

/**
 * A stateless operator. The whole batch goes through the user function in one call; if that call throws, the batch
 * is re-run record by record so only the poison record(s) go to the dead-letter queue. Safe because these operators
 * hold no state, so re-running has no side effect beyond the discarded outputs.
 */
export class StatelessNode implements ChainNode {
  constructor(
    private readonly kind: StatelessKind,
    private readonly operatorId: string,
    private readonly fn: (value: unknown) => unknown,
    private readonly env: ChainEnv,
    private readonly next: ChainNode[],
  ) {}

  push(records: readonly StreamRecord[]): void {
    let out: StreamRecord[];
    try {
      out = this.run(records);
    } catch {
      out = [];
      for (const record of records) {
        try {
          out.push(...this.run([record]));
        } catch (err) {
          sendToDeadLetters(this.env, { operatorId: this.operatorId, reason: 'user-function', error: err }, record.value, record.raw, record.timestamp);
        }
      }
    }
    if (out.length > 0) for (const n of this.next) n.push(out);
  }

  private run(records: readonly StreamRecord[]): StreamRecord[] {
    const fn = this.fn;
    const out: StreamRecord[] = [];
    switch (this.kind) {
      case 'map':
        for (const r of records) out.push({ value: fn(r.value), timestamp: r.timestamp, ingestMs: r.ingestMs });
        break;
      case 'filter':
        for (const r of records) if (fn(r.value)) out.push(r);
        break;
      case 'flatMap':
        for (const r of records) {
          for (const value of fn(r.value) as Iterable<unknown>) out.push({ value, timestamp: r.timestamp, ingestMs: r.ingestMs });
        }
        break;
    }
    return out;
  }
}

/**
 * Most records one sink write carries. kafkajs groups a send's messages per partition by copying the partition's
 * array for every message (quadratic in the records per partition), so a 4,096-record batch costs 4× more per
 * record than 1,024-record writes; awaited one after another they keep the batch's order.
 */
const SINK_WRITE_RECORDS = 1_024;

/** Hands records to a sink once per batch; event-time and processing-time latency are measured here. */
export class SinkTerminal implements ChainNode, ChainTerminal {
  private pending: readonly StreamRecord[] = [];
  /** `pending` is an upstream array taken as is (the usual case: one push per batch); copy before appending. */
  private adopted = false;

  constructor(
    private readonly writer: SinkWriter,
    private readonly env: ChainEnv,
  ) {}

  push(records: readonly StreamRecord[]): void {
    if (this.pending.length === 0) {
      this.pending = records;
      this.adopted = true;
      return;
    }
    const pending = this.adopted ? this.pending.slice() : (this.pending as StreamRecord[]);
    for (const r of records) pending.push(r);
    this.pending = pending;
    this.adopted = false;
  }

  async emit(): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.adopted = false;
    const metrics = this.env.metrics;
    const now = this.env.clock.now();
    // Runs of equal (timestamp, ingestion time) — a window firing's results — are recorded once with their count.
    for (let i = 0; i < batch.length; ) {
      const { timestamp, ingestMs } = batch[i];
      let end = i + 1;
      while (end < batch.length && batch[end].timestamp === timestamp && batch[end].ingestMs === ingestMs) end++;
      if (end - i === 1) metrics.recordLatency(timestamp, ingestMs, now);
      else metrics.recordLatencyRun(timestamp, ingestMs, now, end - i);
      i = end;
    }
    metrics.onBatchOut(batch.length);
    if (batch.length <= SINK_WRITE_RECORDS) return this.writer.write(batch);
    for (let i = 0; i < batch.length; i += SINK_WRITE_RECORDS) await this.writer.write(batch.slice(i, i + SINK_WRITE_RECORDS));
  }

  onWatermark(): Promise<void> {
    return Promise.resolve();
  }

  onIdle(): Promise<void> {
    return Promise.resolve();
  }

  onEnd(): Promise<void> {
    return this.writer.close();
  }

  /** Everything before the barrier was handed to the sink already (exactly-once sinks seal their epoch here). */
  onBarrier(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * keyBy: computes key → key group (the serialised key is built only if needed), then hands the batch to the keyed
 * exchange. When it is the only reader of a source (`fuseWithSource`), the source builds the keyed records itself
 * through `route` and the batch arrives here keyed already: one record object per record instead of two.
 */
export class KeyByTerminal implements ChainNode, ChainTerminal {
  private pending: KeyedRecord[] = [];
  /** `pending` is an upstream array taken as is (fused with a source: one push per batch); copy before appending. */
  private adopted = false;
  private fused = false;

  /** Numbers this terminal's records: a split key's part is chosen from it (KeySplits.route). */
  private sequence = 0;

  constructor(
    private readonly operatorId: string,
    private readonly selector: (value: unknown) => KeyValue,
    private readonly maxParallelism: number,
    private readonly sender: KeyedSender,
    private readonly env: ChainEnv,
    /** The receiving operator's split hot keys (JobControl.splitKeys changes them while the job runs). */
    private readonly target: { readonly splits: KeySplits },
  ) {}

  /** From now on `push` receives records built by `route` (the caller guarantees nothing else reads them). */
  fuseWithSource(): void {
    this.fused = true;
  }

  /** The keyed record of one value, or undefined when the key selector threw (the value is dead-lettered). */
  route(value: unknown, timestamp: number, ingestMs: number, raw: Buffer | undefined): RoutedRecord | undefined {
    try {
      const key = this.selector(value);
      const keyGroup = keyGroupOfKey(key, this.maxParallelism);
      const splits = this.target.splits;
      return new RoutedRecord(value, timestamp, ingestMs, raw, key, splits.isEmpty ? keyGroup : splits.route(key, keyGroup, this.sequence++));
    } catch (err) {
      sendToDeadLetters(this.env, { operatorId: this.operatorId, reason: 'key', error: err }, value, raw, timestamp);
      return undefined;
    }
  }

  push(records: readonly StreamRecord[]): void {
    if (this.fused) {
      if (this.pending.length === 0) {
        this.pending = records as KeyedRecord[];
        this.adopted = true;
        return;
      }
      if (this.adopted) this.pending = this.pending.slice();
      this.adopted = false;
      for (const r of records) this.pending.push(r as KeyedRecord);
      return;
    }
    for (const r of records) {
      const routed = this.route(r.value, r.timestamp, r.ingestMs, r.raw);
      if (routed !== undefined) this.pending.push(routed);
    }
  }

  async emit(positions?: Readonly<Record<string, string>>): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.adopted = false;
    this.env.metrics.onBatchOut(batch.length);
    await this.sender.send(this.env.subtask, batch, positions);
  }

  onWatermark(watermark: number): Promise<void> {
    return this.sender.sendWatermark(this.env.subtask, watermark);
  }

  onIdle(): Promise<void> {
    return this.sender.sendIdle(this.env.subtask);
  }

  onEnd(): Promise<void> {
    return this.sender.sendEnd(this.env.subtask);
  }

  onBarrier(checkpointId: number): Promise<void> {
    return this.sender.sendBarrier(this.env.subtask, checkpointId);
  }
}

/** The broadcast side of connect(): every record goes to every subtask of the connected operator. */
export class BroadcastTerminal implements ChainNode, ChainTerminal {
  private pending: StreamRecord[] = [];

  constructor(
    private readonly sender: BroadcastSender,
    private readonly env: ChainEnv,
  ) {}

  push(records: readonly StreamRecord[]): void {
    for (const r of records) this.pending.push(r);
  }

  async emit(): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.env.metrics.onBatchOut(batch.length);
    await this.sender.send(this.env.subtask, batch);
  }

  /** Broadcast inputs do not take part in event time (see docs/engine.md). */
  onWatermark(): Promise<void> {
    return Promise.resolve();
  }

  onIdle(): Promise<void> {
    return Promise.resolve();
  }

  onEnd(): Promise<void> {
    return this.sender.sendEnd(this.env.subtask);
  }
  onBarrier(checkpointId: number): Promise<void> {
    return this.sender.sendBarrier(this.env.subtask, checkpointId);
  }
}

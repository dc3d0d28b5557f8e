/**
 * keyBy and broadcast edges through Kafka, for jobs whose subtasks run in several processes. Each keyed operator
 * has one internal topic with one partition per key group; a record is written to partition = its key group and
 * read by the subtask that owns that key group (explicit KafkaReader assignments, engine-owned offsets).
 *
 * Control travels in-band, as records in every partition: watermarks, idleness and end of input per upstream
 * channel, and broadcast records (with a per-channel sequence number, so a subtask that reads several partitions
 * applies each broadcast once, the first time it meets it — before any data record it reads after it).
 */
import { pack, unpack } from 'msgpackr';
import type { ConsumedRecord, KafkaConnector, KafkaReader, KafkaWriter, ProducedRecord } from '@weir/kafka';
import { decodeKey } from '../../keygroups';
import type { SourcePump } from '../connectors/sources';
import { WriteBehind } from '../connectors/write-behind';
import type { InputQueue } from '../queue';
import { type KeyedRecord, MIN_WATERMARK, type StreamRecord } from '../records';
import { type BroadcastSender, ExchangeError, type KeyedSender } from './exchange';
import { jobInternalTopicPrefix } from '../topic-names';

const DATA = 0;
const WATERMARK = 1;
const IDLE = 2;
const END = 3;
const BROADCAST = 4;
const BROADCAST_END = 5;

/** Watermarks go to every partition; sending one per channel at most this often bounds that fan-out. */
const WATERMARK_INTERVAL_MS = 100;

export function exchangeTopic(tenantId: string, jobId: string, operatorId: string): string {
  return `${jobInternalTopicPrefix(tenantId, jobId)}${operatorId}.exchange`.replace(/[^A-Za-z0-9._-]/g, '_');
}

/**
 * The writing side of one upstream subtask: a KafkaWriter, started on first use, written behind (write-behind.ts):
 * a send returns once queued, so the upstream subtask goes on while the previous batch is acknowledged. Order holds
 * (one FIFO, one request in flight), and key-group moves do not depend on acknowledgements (the records of a moving
 * key group wait in its partition, however late they arrive).
 */
abstract class ExchangeWriter {
  private started: Promise<void> | null = null;
  protected readonly writer: KafkaWriter;
  private readonly behind: WriteBehind;

  constructor(
    kafka: KafkaConnector,
    writerId: string,
    protected readonly topic: string,
    protected readonly partitions: number,
  ) {
    this.writer = kafka.writer({ writerId });
    this.behind = new WriteBehind(this.writer, () => (this.started ??= this.writer.start()));
  }

  protected write(records: ProducedRecord[]): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    return this.behind.add(records);
  }

  protected toAll(value: Buffer): ProducedRecord[] {
    const out: ProducedRecord[] = new Array(this.partitions);
    for (let p = 0; p < this.partitions; p++) out[p] = { topic: this.topic, partition: p, value };
    return out;
  }

  async close(): Promise<void> {
    try {
      await this.behind.drain();
    } finally {
      if (this.started) await this.started.catch(() => undefined);
      await this.writer.close();
    }
  }
}

export class KafkaKeyedSender extends ExchangeWriter implements KeyedSender {
  private lastWatermarkAt = 0;
  private pendingWatermark: { channel: number; watermark: number } | null = null;
  private timer: NodeJS.Timeout | null = null;

  async send(channel: number, records: readonly KeyedRecord[]): Promise<void> {
    const out: ProducedRecord[] = new Array(records.length);
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      out[i] = {
        topic: this.topic,
        partition: r.keyGroup,
        key: Buffer.from(r.keyBytes.buffer, r.keyBytes.byteOffset, r.keyBytes.byteLength),
        value: pack([DATA, channel, r.timestamp, r.ingestMs, r.value]),
      };
    }
    await this.write(out);
  }

  async sendWatermark(channel: number, watermark: number): Promise<void> {
    const now = performance.now();
    if (now - this.lastWatermarkAt < WATERMARK_INTERVAL_MS) {
      this.pendingWatermark = { channel, watermark };
      this.timer ??= setTimeout(() => {
        this.timer = null;
        const pending = this.pendingWatermark;
        if (pending) void this.sendWatermark(pending.channel, pending.watermark).catch(() => undefined);
      }, WATERMARK_INTERVAL_MS);
      return;
    }
    this.lastWatermarkAt = now;
    this.pendingWatermark = null;
    await this.write(this.toAll(pack([WATERMARK, channel, watermark])));
  }

  async sendIdle(channel: number): Promise<void> {
    await this.write(this.toAll(pack([IDLE, channel])));
  }

  async sendEnd(channel: number): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pendingWatermark = null;
    await this.write(this.toAll(pack([END, channel])));
  }

  sendBarrier(): Promise<void> {
    return Promise.reject(new ExchangeError('checkpoint barriers over the Kafka exchange are not implemented yet'));
  }

  override async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    await super.close();
  }
}

export class KafkaBroadcastSender extends ExchangeWriter implements BroadcastSender {
  private seq = 0;

  async send(channel: number, records: readonly StreamRecord[]): Promise<void> {
    const out: ProducedRecord[] = [];
    for (const r of records) out.push(...this.toAll(pack([BROADCAST, channel, r.timestamp, r.ingestMs, r.value, ++this.seq])));
    await this.write(out);
  }

  async sendEnd(channel: number): Promise<void> {
    await this.write(this.toAll(pack([BROADCAST_END, channel])));
  }

  sendBarrier(): Promise<void> {
    return Promise.reject(new ExchangeError('checkpoint barriers over the Kafka exchange are not implemented yet'));
  }
}

/**
 * Reads one keyed subtask's key-group partitions and turns them back into input messages, preserving the order of
 * each partition. Watermarks are combined per upstream channel as the minimum over the partitions read (a channel's
 * watermark has passed only when it has passed in every partition), then handed to the subtask per channel.
 */
export class KafkaExchangePump implements SourcePump {
  private stopped = false;
  private readonly reader: KafkaReader;
  private readonly marks = new Map<number, number[]>();
  private readonly emitted: number[];
  private readonly ended: Set<number>[];
  private readonly idle: Set<number>[];
  private readonly broadcastSeq: number[];
  private readonly broadcastEnded: Set<number>[];
  private readonly partitions: Set<number>;
  /** Per key group: the offset after the last record handed to the subtask. */
  private readonly offered = new Map<number, string>();
  /** Assignment changes wait for the loop to be between polls. */
  private readonly changes: (() => Promise<void>)[] = [];
  private started = false;

  constructor(
    kafka: KafkaConnector,
    readerId: string,
    private readonly topic: string,
    keyGroups: readonly number[],
    private readonly queue: InputQueue,
    private readonly dataChannels: number,
    broadcastChannels: number,
  ) {
    this.partitions = new Set(keyGroups);
    for (const p of keyGroups) this.marks.set(p, new Array<number>(dataChannels).fill(MIN_WATERMARK));
    this.emitted = new Array<number>(dataChannels).fill(MIN_WATERMARK);
    this.ended = Array.from({ length: dataChannels }, () => new Set<number>());
    this.idle = Array.from({ length: dataChannels }, () => new Set<number>());
    this.broadcastSeq = new Array<number>(broadcastChannels).fill(0);
    this.broadcastEnded = Array.from({ length: broadcastChannels }, () => new Set<number>());
    this.reader = kafka.reader({
      readerId,
      assignments: keyGroups.map((partition) => ({ topic, partition, offset: 'earliest' })),
      maxBufferedRecords: 20_000,
    });
  }

  async run(): Promise<void> {
    if (this.partitions.size === 0) {
      // Owns no key group: nothing will ever arrive, so it must not hold back event time or the end of the job.
      for (let c = 0; c < this.dataChannels; c++) this.queue.offer({ kind: 'end', channel: c, lane: 'data' });
      for (let c = 0; c < this.broadcastSeq.length; c++) this.queue.offer({ kind: 'end', channel: c, lane: 'broadcast' });
      return;
    }
    await this.reader.start();
    this.started = true;
    try {
      while (!this.stopped) {
        while (this.changes.length > 0) await this.changes.shift()!();
        const records = await this.reader.poll(4_096, 100);
        if (records.length > 0) {
          this.dispatch(records);
          await this.queue.writable();
        }
      }
    } finally {
      await this.reader.close();
    }
  }

  stop(): void {
    this.stopped = true;
  }

  positions(): ReadonlyMap<string, string> {
    return this.reader.positions();
  }

  /**
   * Stops reading a key group's partition. Resolves with the offset after the last record handed to the subtask:
   * the new owner reads on from there, so nothing is lost or read twice.
   */
  release(keyGroup: number): Promise<string> {
    return this.change(async () => {
      const offset = this.offered.get(keyGroup) ?? 'earliest';
      this.partitions.delete(keyGroup);
      this.marks.delete(keyGroup);
      this.offered.delete(keyGroup);
      for (const set of [...this.ended, ...this.idle, ...this.broadcastEnded]) set.delete(keyGroup);
      await this.reassign();
      // Without that partition the per-channel minimum can only rise.
      for (let c = 0; c < this.emitted.length; c++) this.recomputeWatermark(c);
      return offset;
    });
  }

  /** Starts reading a key group's partition at `offset`, its watermarks starting where this subtask's are. */
  adopt(keyGroup: number, offset: string): Promise<void> {
    return this.change(async () => {
      this.partitions.add(keyGroup);
      this.marks.set(keyGroup, [...this.emitted]);
      this.offered.set(keyGroup, offset);
      await this.reassign();
    });
  }

  private change<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.started || this.stopped) return Promise.reject(new ExchangeError('the exchange reader is not running'));
    return new Promise<T>((resolve, reject) => this.changes.push(() => fn().then(resolve, reject)));
  }

  private reassign(): Promise<void> {
    return this.reader.reassign(
      [...this.partitions].map((partition) => ({ topic: this.topic, partition, offset: this.offered.get(partition) ?? 'earliest' })),
    );
  }

  injectBarrier(): void {
    throw new ExchangeError('checkpoint barriers over the Kafka exchange are not implemented yet');
  }

  private dispatch(records: readonly ConsumedRecord[]): void {
    let data: KeyedRecord[] = [];
    const flushData = () => {
      if (data.length === 0) return;
      this.queue.offer({ kind: 'data', channel: -1, records: data });
      data = [];
    };
    // The last record read per partition: `offered` is set once per partition and poll, not once per record.
    const last = new Map<number, ConsumedRecord>();
    for (const r of records) {
      if (!this.partitions.has(r.partition)) continue;
      last.set(r.partition, r);
      const message = unpack(r.value!) as unknown[];
      const kind = message[0] as number;
      const channel = message[1] as number;
      if (kind === DATA) {
        const keyBytes = r.key!;
        data.push({
          value: message[4],
          timestamp: message[2] as number,
          ingestMs: message[3] as number,
          key: decodeKey(keyBytes),
          keyBytes,
          keyGroup: r.partition,
        });
        continue;
      }
      flushData();
      if (kind === WATERMARK) this.onWatermark(r.partition, channel, message[2] as number);
      else if (kind === IDLE) this.onIdle(r.partition, channel);
      else if (kind === END) this.onEnd(r.partition, channel);
      else if (kind === BROADCAST) this.onBroadcast(channel, message);
      else if (kind === BROADCAST_END) this.onBroadcastEnd(r.partition, channel);
    }
    flushData();
    for (const [partition, r] of last) this.offered.set(partition, String(BigInt(r.offset) + 1n));
  }

  private onWatermark(partition: number, channel: number, watermark: number): void {
    const marks = this.marks.get(partition);
    if (!marks || watermark <= marks[channel]) return;
    marks[channel] = watermark;
    this.idle[channel].delete(partition);
    this.recomputeWatermark(channel);
  }

  private recomputeWatermark(channel: number): void {
    if (this.marks.size === 0) return;
    let min = Number.POSITIVE_INFINITY;
    for (const m of this.marks.values()) if (m[channel] < min) min = m[channel];
    if (min > this.emitted[channel]) {
      this.emitted[channel] = min;
      this.queue.offer({ kind: 'watermark', channel, watermark: min });
    }
  }

  private onIdle(partition: number, channel: number): void {
    this.idle[channel].add(partition);
    if (this.idle[channel].size === this.partitions.size) this.queue.offer({ kind: 'idle', channel });
  }

  private onEnd(partition: number, channel: number): void {
    this.ended[channel].add(partition);
    if (this.ended[channel].size === this.partitions.size) this.queue.offer({ kind: 'end', channel, lane: 'data' });
  }

  private onBroadcast(channel: number, message: unknown[]): void {
    const seq = message[5] as number;
    if (seq <= this.broadcastSeq[channel]) return;
    this.broadcastSeq[channel] = seq;
    this.queue.offer({
      kind: 'broadcast',
      channel,
      records: [{ value: message[4], timestamp: message[2] as number, ingestMs: message[3] as number }],
    });
  }

  private onBroadcastEnd(partition: number, channel: number): void {
    this.broadcastEnded[channel].add(partition);
    if (this.broadcastEnded[channel].size === this.partitions.size) this.queue.offer({ kind: 'end', channel, lane: 'broadcast' });
  }
}

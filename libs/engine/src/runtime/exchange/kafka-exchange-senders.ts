/**
 * The writing side of the Kafka exchange: keyBy and broadcast edges whose receiving subtasks may run in other
 * processes. A data record goes to partition = its key group; control goes to every partition.
 */
import { pack } from 'msgpackr';
import type { KafkaConnector, KafkaWriter, ProducedRecord } from '@weir/kafka';
import { WriteBehind } from '../connectors/write-behind';
import type { KeyedRecord, StreamRecord } from '../records';
import type { BroadcastSender, KeyedSender } from './exchange';
import { BARRIER, BROADCAST, BROADCAST_BARRIER, BROADCAST_END, DATA, END, IDLE, WATERMARK } from './kafka-exchange-wire';

/** Watermarks go to every partition; sending one per channel at most this often bounds that fan-out. */
const WATERMARK_INTERVAL_MS = 100;

/**
 * One upstream subtask's KafkaWriter, started on first use, written behind (write-behind.ts): a send returns once
 * queued, so the upstream subtask goes on while the previous batch is acknowledged. Order holds (one FIFO, one request
 * in flight): a barrier or a watermark is never overtaken by the data before it. A checkpoint needs no drain here:
 * it completes only once every downstream subtask has read the barrier, hence everything written before it.
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
    /** Stamped on every record (see kafka-exchange-wire.ts). */
    protected readonly incarnation: number,
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

  /** Resolves once everything written so far is acknowledged by the exchange. */
  drain(): Promise<void> {
    return this.behind.drain();
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
  constructor(kafka: KafkaConnector, writerId: string, topic: string, partitions: number, incarnation: number, senders: number) {
    super(kafka, writerId, topic, partitions, incarnation);
    this.senders = senders;
  }

  /**
   * Set for an edge into a broadcast-connected operator: each record carries its source batch's position (the
   * `topic:partition` and the offset after that batch), so the receiving subtask knows exactly where its input stood
   * when it applied a broadcast (rule acknowledgements name that position; kafka-exchange-reader.ts).
   */
  carryPositions = false;
  /**
   * The sending stage's subtask count, written into every barrier: a live rescale sets it between two checkpoints
   * (JobControl.resizeKeyedStage), so the receivers know from the next barrier on how many channels to align over.
   */
  senders: number;
  private lastWatermarkAt = 0;
  private pendingWatermark: { channel: number; watermark: number } | null = null;
  private timer: NodeJS.Timeout | null = null;

  async send(channel: number, records: readonly KeyedRecord[], positions?: Readonly<Record<string, string>>): Promise<void> {
    const out: ProducedRecord[] = new Array(records.length);
    const incarnation = this.incarnation;
    // A source batch reads one partition: its position is one entry.
    let at: string | undefined;
    let offset: string | undefined;
    if (this.carryPositions && positions) {
      for (const key in positions) {
        at = key;
        offset = positions[key];
      }
    }
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      out[i] = {
        topic: this.topic,
        partition: r.keyGroup,
        key: Buffer.from(r.keyBytes.buffer, r.keyBytes.byteOffset, r.keyBytes.byteLength),
        value: at === undefined
          ? pack([DATA, incarnation, channel, r.timestamp, r.ingestMs, r.value])
          : pack([DATA, incarnation, channel, r.timestamp, r.ingestMs, r.value, at, offset]),
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
    await this.write(this.toAll(pack([WATERMARK, this.incarnation, channel, watermark])));
  }

  async sendIdle(channel: number): Promise<void> {
    await this.write(this.toAll(pack([IDLE, this.incarnation, channel])));
  }

  /** `senders`: the channel's subtask retired in a live rescale that leaves its stage this many (see records.ts). */
  async sendEnd(channel: number, senders?: number): Promise<void> {
    this.cancelWatermark();
    await this.write(this.toAll(pack(senders === undefined ? [END, this.incarnation, channel] : [END, this.incarnation, channel, senders])));
  }

  async sendBarrier(channel: number, checkpointId: number): Promise<void> {
    // A watermark held back by the throttle goes first: nothing of this channel may trail its barrier but what its
    // input brings later (a subtask that retired in a live rescale sends nothing after its last barrier).
    const pending = this.pendingWatermark;
    const out: ProducedRecord[] = [];
    if (pending && pending.channel === channel) {
      this.cancelWatermark();
      this.lastWatermarkAt = performance.now();
      out.push(...this.toAll(pack([WATERMARK, this.incarnation, channel, pending.watermark])));
    }
    out.push(...this.toAll(pack([BARRIER, this.incarnation, channel, checkpointId, this.senders])));
    await this.write(out);
  }

  override async close(): Promise<void> {
    this.cancelWatermark();
    await super.close();
  }

  private cancelWatermark(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pendingWatermark = null;
  }
}

export class KafkaBroadcastSender extends ExchangeWriter implements BroadcastSender {
  private seq = 0;

  async send(channel: number, records: readonly StreamRecord[]): Promise<void> {
    const out: ProducedRecord[] = [];
    for (const r of records) out.push(...this.toAll(pack([BROADCAST, this.incarnation, channel, r.timestamp, r.ingestMs, r.value, ++this.seq])));
    await this.write(out);
  }

  async sendEnd(channel: number): Promise<void> {
    await this.write(this.toAll(pack([BROADCAST_END, this.incarnation, channel])));
  }

  async sendBarrier(channel: number, checkpointId: number): Promise<void> {
    await this.write(this.toAll(pack([BROADCAST_BARRIER, this.incarnation, channel, checkpointId])));
  }
}

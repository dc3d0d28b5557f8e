import type { ConsumedRecord, KafkaConnector, KafkaReader } from '@weir/kafka';
import type { GeneratorSourceSpec, KafkaSourceSpec } from '../../sdk/connectors';
import type { SourceOutput, SourceInput } from './source-output';

/** A running source subtask: reads in batches and offers them to its subtask until stopped or exhausted. */
export interface SourcePump {
  run(): Promise<void>;
  stop(): void;
  /** Per partition, the next offset to read (what a checkpoint stores); empty for non-Kafka sources. */
  positions(): ReadonlyMap<string, string>;
  /** Puts a checkpoint barrier into the subtask's input after every record offered so far. */
  injectBarrier(checkpointId: number): void;
}

const BATCH = 1_000;
const EMPTY = Buffer.alloc(0);

/** Mulberry32 PRNG reseeded per record index, so output depends only on (seed, index), not on parallelism. */
export class IndexedRandom {
  private state = 0;
  readonly next = (): number => {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  constructor(private readonly seed: number) {}

  /** Positions the generator at record `index` (one object reused for every record: no allocation). */
  at(index: number): () => number {
    this.state = (Math.imul(this.seed | 0, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b)) >>> 0;
    return this.next;
  }
}

/**
 * Deterministic generator. Subtask s of P produces indexes s, s+P, s+2P…; at a fixed rate, record i is scheduled at
 * start + i/rate and stamped with that scheduled time, so a stall shows up as latency (no coordinated omission).
 */
export class GeneratorPump implements SourcePump {
  private stopped = false;
  private readonly barriers: number[] = [];
  private nextIndex = 0;

  constructor(
    private readonly spec: GeneratorSourceSpec<unknown>,
    private readonly subtask: number,
    private readonly parallelism: number,
    private readonly out: SourceOutput,
    private readonly now: () => number,
    /** Restored position: the next index this subtask produces (from a checkpoint at the same parallelism). */
    private readonly startIndex?: number,
  ) {}

  async run(): Promise<void> {
    const { spec, subtask, parallelism } = this;
    const first = this.startIndex ?? subtask;
    const start = this.now() - (first * (spec.ratePerSec ? 1000 / spec.ratePerSec : 0));
    const intervalMs = spec.ratePerSec ? 1000 / spec.ratePerSec : 0;
    let index = first;
    const random = new IndexedRandom(spec.seed);
    this.nextIndex = index;
    while (!this.stopped && (spec.count === undefined || index < spec.count)) {
      this.offerBarriers();
      const batch: SourceInput[] = [];
      const now = this.now();
      while (batch.length < BATCH && (spec.count === undefined || index < spec.count)) {
        const scheduled = intervalMs > 0 ? start + index * intervalMs : now;
        if (scheduled > now) break;
        batch.push({ value: spec.generate(index, random.at(index)), sourceTimestamp: Math.floor(scheduled) });
        index += parallelism;
      }
      this.nextIndex = index;
      if (batch.length > 0) {
        await this.out.emit(0, batch);
        // The whole in-memory pipeline can run on microtasks alone; yield so timers and I/O (and stop()) get a turn.
        await new Promise<void>((resolve) => setImmediate(resolve));
      } else {
        this.out.tick();
        const next = start + index * intervalMs;
        await sleep(Math.max(1, Math.min(50, next - this.now())));
      }
    }
    this.offerBarriers();
    if (!this.stopped) this.out.end();
  }

  stop(): void {
    this.stopped = true;
  }

  positions(): ReadonlyMap<string, string> {
    return new Map([['index', String(this.nextIndex)]]);
  }

  injectBarrier(checkpointId: number): void {
    this.barriers.push(checkpointId);
  }

  private offerBarriers(): void {
    while (this.barriers.length > 0) this.out.barrier(this.barriers.shift()!, { index: String(this.nextIndex) });
  }
}

/** Kafka source subtask: explicit partition assignments, engine-owned offsets, per-partition watermarks. */
export class KafkaPump implements SourcePump {
  private stopped = false;
  private readonly reader: KafkaReader;
  private readonly barriers: number[] = [];
  /** Per partition: the offset after the last record offered to the subtask (what a barrier stands for). */
  private readonly offered = new Map<string, string>();

  constructor(
    kafka: KafkaConnector,
    readerId: string,
    private readonly spec: KafkaSourceSpec<unknown>,
    partitions: readonly number[],
    private readonly out: SourceOutput,
    startOffsets?: ReadonlyMap<number, string>,
  ) {
    this.reader = kafka.reader({
      readerId,
      assignments: partitions.map((partition) => ({
        topic: spec.topic,
        partition,
        offset: startOffsets?.get(partition) ?? spec.startFrom,
      })),
      maxBufferedRecords: 20_000,
    });
    for (const p of partitions) this.offered.set(`${spec.topic}:${p}`, startOffsets?.get(p) ?? spec.startFrom);
  }

  injectBarrier(checkpointId: number): void {
    this.barriers.push(checkpointId);
  }

  private offerBarriers(): void {
    while (this.barriers.length > 0) this.out.barrier(this.barriers.shift()!, Object.fromEntries(this.offered));
  }

  async run(): Promise<void> {
    await this.reader.start();
    try {
      while (!this.stopped) {
        this.offerBarriers();
        const records = await this.reader.poll(2_000, 100);
        if (records.length === 0) {
          this.out.tick();
          continue;
        }
        await this.emitByPartition(records);
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

  private async emitByPartition(records: readonly ConsumedRecord[]): Promise<void> {
    const byPartition = new Map<number, SourceInput[]>();
    const format = this.spec.format;
    // Per partition, the last record of the batch decides what a barrier after it stands for: one offset string
    // per partition and batch, not one BigInt and two strings per record.
    const last = new Map<number, ConsumedRecord>();
    for (const r of records) {
      last.set(r.partition, r);
      const raw = r.value ?? EMPTY;
      let value: unknown;
      try {
        value = format.decode(raw);
      } catch (err) {
        this.out.deadLetter({ raw, sourceTimestamp: r.timestamp }, err, 'decode');
        continue;
      }
      let list = byPartition.get(r.partition);
      if (!list) byPartition.set(r.partition, (list = []));
      list.push({ value, sourceTimestamp: r.timestamp, raw });
    }
    for (const [partition, r] of last) this.offered.set(`${r.topic}:${partition}`, String(BigInt(r.offset) + 1n));
    if (byPartition.size === 0) {
      this.out.flushDeadLettersOnly();
      return;
    }
    for (const [partition, inputs] of byPartition) {
      const at = `${this.spec.topic}:${partition}`;
      await this.out.emit(partition, inputs, { [at]: this.offered.get(at)! });
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

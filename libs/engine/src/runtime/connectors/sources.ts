import type { ConsumedRecord, KafkaConnector, KafkaReader } from '@weir/kafka';
import type { GeneratorSourceSpec, KafkaSourceSpec } from '../../sdk/connectors';
import type { SourceOutput } from './source-output';

/** A running source subtask: reads in batches and offers them to its subtask until stopped or exhausted. */
export interface SourcePump {
  run(): Promise<void>;
  stop(): void;
  /** Per partition, the next offset to read (what a checkpoint stores); empty for non-Kafka sources. */
  positions(): ReadonlyMap<string, string>;
  /** Puts a checkpoint barrier into the subtask's input after every record offered so far. */
  injectBarrier(checkpointId: number): void;
  /**
   * Stop-with-savepoint: the next barrier this source offers is its last output until `resume()` (barriers of later
   * checkpoints still pass), so nothing read after the savepoint's barrier reaches a sink.
   */
  pauseAfterNextBarrier?(): void;
  /** Reads again after pauseAfterNextBarrier (the savepoint failed and the job keeps running). */
  resume?(): void;
  /** An exchange reader hears of every checkpoint triggered in its process (one owning no key group passes it). */
  onCheckpointTrigger?(checkpointId: number): void;
  /**
   * Records behind the log end over the partitions it reads now (Kafka only: other sources have no log end). Read
   * once per metrics snapshot, never per record.
   */
  backlog?(): number;
}

/**
 * How a source takes part in a fresh start's broadcast bootstrap (broadcast-bootstrap.ts): a data source waits for
 * `hold` before its first read; a broadcast source calls `caughtUp` once it has offered everything that was
 * available when it started (Kafka: up to the end offsets it saw; a generator: what was due).
 */
export interface SourceBootstrap {
  readonly hold?: Promise<void>;
  readonly caughtUp?: () => void;
}

/**
 * Most records a generator hands over at once (fewer when fewer are due): every batch costs its hops through the
 * queues and subtasks once, so 4,096 (the most a keyed subtask takes at a time) beats 1,000 by ~8% of the window
 * job's CPU (bench/_profile-window.ts, A/B).
 */
const BATCH = 4_096;
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
 * What both source pumps share: barriers offered between batches, and two reasons not to read: the bootstrap hold
 * (a data source waiting for broadcast inputs) and a pause after a stop-with-savepoint barrier. While not reading, a
 * pump still offers barriers (a checkpoint must not wait for the hold) but neither records nor watermarks.
 */
abstract class PumpBase {
  protected stopped = false;
  private readonly barriers: number[] = [];
  private pauseAtBarrier = false;
  private paused = false;
  private held: boolean;
  private wake: (() => void) | null = null;

  constructor(
    protected readonly out: SourceOutput,
    protected readonly bootstrap: SourceBootstrap = {},
  ) {
    this.held = bootstrap.hold !== undefined;
    void bootstrap.hold?.then(() => {
      this.held = false;
      this.wakeUp();
    });
  }

  injectBarrier(checkpointId: number): void {
    this.barriers.push(checkpointId);
    this.wakeUp();
  }

  stop(): void {
    this.stopped = true;
    this.wakeUp();
  }

  pauseAfterNextBarrier(): void {
    this.pauseAtBarrier = true;
  }

  resume(): void {
    this.pauseAtBarrier = false;
    this.paused = false;
    this.wakeUp();
  }

  /** What a barrier offered now stands for (per partition, the next offset; a generator's next index). */
  protected abstract barrierPositions(): Record<string, string>;

  protected offerBarriers(): void {
    while (this.barriers.length > 0) {
      this.out.barrier(this.barriers.shift()!, this.barrierPositions());
      if (this.pauseAtBarrier) {
        this.pauseAtBarrier = false;
        this.paused = true;
      }
    }
  }

  /** Offers due barriers; then, while held or paused, waits (offering barriers that arrive) until it may read. */
  protected async mayRead(): Promise<boolean> {
    this.offerBarriers();
    while (!this.stopped && (this.held || this.paused)) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.offerBarriers();
    }
    return !this.stopped;
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}

/**
 * Deterministic generator. Subtask s of P produces indexes s, s+P, s+2P…; at a fixed rate, record i is scheduled at
 * start + i/rate and stamped with that scheduled time, so a stall shows up as latency (no coordinated omission).
 */
export class GeneratorPump extends PumpBase implements SourcePump {
  private nextIndex = 0;

  constructor(
    private readonly spec: GeneratorSourceSpec<unknown>,
    private readonly subtask: number,
    private readonly parallelism: number,
    out: SourceOutput,
    private readonly now: () => number,
    /** Restored position: the next index this subtask produces (from a checkpoint at the same parallelism). */
    private readonly startIndex?: number,
    bootstrap?: SourceBootstrap,
  ) {
    super(out, bootstrap);
  }

  async run(): Promise<void> {
    const { spec, subtask, parallelism } = this;
    const first = this.startIndex ?? subtask;
    const start = this.now() - (first * (spec.ratePerSec ? 1000 / spec.ratePerSec : 0));
    const intervalMs = spec.ratePerSec ? 1000 / spec.ratePerSec : 0;
    let index = first;
    const random = new IndexedRandom(spec.seed);
    this.nextIndex = index;
    // Available at start: an unpaced bounded generator's whole output; a paced or endless one's first record.
    let caughtUpAt: number | null = this.bootstrap.caughtUp ? (!intervalMs && spec.count !== undefined ? spec.count : first + 1) : null;
    while (!this.stopped && (spec.count === undefined || index < spec.count)) {
      if (caughtUpAt !== null && index >= caughtUpAt) {
        caughtUpAt = null;
        this.bootstrap.caughtUp!();
      }
      if (!(await this.mayRead())) break;
      const now = this.now();
      // How many records are due now, so the batch's arrays are allocated once at their size.
      let due = spec.count === undefined ? BATCH : Math.min(BATCH, Math.ceil((spec.count - index) / parallelism));
      if (intervalMs > 0) due = Math.max(0, Math.min(due, Math.floor((now - start) / intervalMs / parallelism - index / parallelism) + 1));
      const values = new Array<unknown>(due);
      const timestamps = new Array<number>(due);
      let n = 0;
      while (n < due) {
        const scheduled = intervalMs > 0 ? start + index * intervalMs : now;
        if (scheduled > now) break;
        values[n] = spec.generate(index, random.at(index));
        timestamps[n++] = Math.floor(scheduled);
        index += parallelism;
      }
      if (n < due) values.length = timestamps.length = n;
      this.nextIndex = index;
      if (values.length > 0) {
        await this.out.emit(0, { values, timestamps });
        // The whole in-memory pipeline can run on microtasks alone; yield so timers and I/O (and stop()) get a turn.
        await new Promise<void>((resolve) => setImmediate(resolve));
      } else {
        this.out.tick();
        const next = start + index * intervalMs;
        await sleep(Math.max(1, Math.min(50, next - this.now())));
      }
    }
    if (caughtUpAt !== null) this.bootstrap.caughtUp!();
    this.offerBarriers();
    if (!this.stopped) this.out.end();
  }

  positions(): ReadonlyMap<string, string> {
    return new Map([['index', String(this.nextIndex)]]);
  }

  protected barrierPositions(): Record<string, string> {
    return { index: String(this.nextIndex) };
  }
}

/** Where a source partition's reading goes on when a live rescale moves it to another subtask. */
export interface PartitionHandover {
  /** The next offset to read: the old owner offered everything before it. */
  readonly offset: string;
  /** The highest event time the old owner saw in it (its watermark continues from there), or null. */
  readonly maxTimestamp: number | null;
}

/** Kafka source subtask: explicit partition assignments, engine-owned offsets, per-partition watermarks. */
export class KafkaPump extends PumpBase implements SourcePump {
  private readonly reader: KafkaReader;
  /** Per partition: the offset after the last record offered to the subtask (what a barrier stands for). */
  private readonly offered = new Map<string, string>();
  /** Partition moves (a live rescale) wait for the loop to be between polls: everything polled is offered then. */
  private readonly changes: ((stopped?: boolean) => Promise<void>)[] = [];

  constructor(
    kafka: KafkaConnector,
    readerId: string,
    private readonly spec: KafkaSourceSpec<unknown>,
    partitions: readonly number[],
    out: SourceOutput,
    startOffsets?: ReadonlyMap<number, string>,
    bootstrap?: SourceBootstrap,
    /** The topic's other partitions, which a live rescale may move here (assigned, never fetched until then). */
    standby: readonly number[] = [],
  ) {
    super(out, bootstrap);
    this.reader = kafka.reader({
      readerId,
      assignments: partitions.map((partition) => ({
        topic: spec.topic,
        partition,
        offset: startOffsets?.get(partition) ?? spec.startFrom,
      })),
      standby: standby.map((partition) => ({ topic: spec.topic, partition })),
      maxBufferedRecords: 20_000,
    });
    for (const p of partitions) this.offered.set(`${spec.topic}:${p}`, startOffsets?.get(p) ?? spec.startFrom);
  }

  /**
   * Stops reading a partition between two polls, after everything polled from it was offered to the subtask, and
   * says where its new owner reads on. Barriers offered from now on leave it out.
   */
  releasePartition(partition: number): Promise<PartitionHandover> {
    return this.change(async () => {
      const key = `${this.spec.topic}:${partition}`;
      if (!this.offered.has(key)) throw new Error(`this subtask does not read partition ${partition} of "${this.spec.topic}"`);
      // The reader's position moves past transaction markers too; before its first fetch it has none yet.
      const offset = this.reader.positions().get(key) ?? this.offered.get(key)!;
      this.reader.deactivate(this.spec.topic, partition);
      this.offered.delete(key);
      return { offset, maxTimestamp: this.out.removePartition(partition) };
    });
  }

  /** Reads a partition moved here from its old owner's offset on; its watermark goes out before its first record. */
  adoptPartition(partition: number, handover: PartitionHandover): Promise<void> {
    return this.change(async () => {
      this.offered.set(`${this.spec.topic}:${partition}`, handover.offset);
      this.out.addPartition(partition, handover.maxTimestamp);
      await this.reader.activate(this.spec.topic, partition, handover.offset);
    });
  }

  /** Partitions this subtask reads now. */
  get partitions(): number[] {
    return [...this.offered.keys()].map((key) => Number(key.slice(key.lastIndexOf(':') + 1)));
  }

  /** Runs `fn` between two polls (once the reader started); rejected if the pump stops first. */
  private change<T>(fn: () => Promise<T>): Promise<T> {
    if (this.stopped) return Promise.reject(new Error('the source is not running'));
    return new Promise<T>((resolve, reject) =>
      this.changes.push((stopped) => (stopped ? Promise.resolve(reject(new Error('the source stopped'))) : fn().then(resolve, reject))),
    );
  }

  protected barrierPositions(): Record<string, string> {
    return Object.fromEntries(this.offered);
  }

  async run(): Promise<void> {
    await this.reader.start();
    try {
      let ends = this.bootstrap.caughtUp ? this.endOffsetsAtStart() : null;
      while (!this.stopped) {
        while (this.changes.length > 0) await this.changes.shift()!();
        if (ends && this.reached(ends)) {
          ends = null;
          this.bootstrap.caughtUp!();
        }
        if (!(await this.mayRead())) break;
        const records = await this.reader.poll(2_000, 100);
        if (records.length === 0) {
          this.out.tick();
          continue;
        }
        await this.emitByPartition(records);
      }
    } finally {
      // Changes still waiting will never run: their callers learn so.
      for (const change of this.changes.splice(0)) void change(true);
      await this.reader.close();
    }
  }

  positions(): ReadonlyMap<string, string> {
    return this.reader.positions();
  }

  /**
   * The reader's lag (high watermark last fetched minus position) over the partitions this subtask reads: standby
   * partitions, which a live rescale may move here, are another subtask's backlog until then.
   */
  backlog(): number {
    const lag = this.reader.lag();
    let total = 0;
    for (const key of this.offered.keys()) total += lag.get(key) ?? 0;
    return total;
  }

  /**
   * Per partition, the log end when the reader started: its start position plus the lag it resolved then (the
   * high watermark of the start, before any fetch moved it), so records published later do not extend the wait.
   */
  private endOffsetsAtStart(): Map<string, bigint> {
    const lag = this.reader.lag();
    const ends = new Map<string, bigint>();
    for (const [key, position] of this.reader.positions()) ends.set(key, BigInt(position) + BigInt(lag.get(key) ?? 0));
    return ends;
  }

  /** Every partition read up to `ends` (positions move past transaction markers too). Once per batch, not per record. */
  private reached(ends: ReadonlyMap<string, bigint>): boolean {
    const positions = this.reader.positions();
    for (const [key, end] of ends) if (BigInt(positions.get(key) ?? '0') < end) return false;
    return true;
  }

  private async emitByPartition(records: readonly ConsumedRecord[]): Promise<void> {
    const byPartition = new Map<number, { values: unknown[]; timestamps: number[]; raws: Buffer[] }>();
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
      let batch = byPartition.get(r.partition);
      if (!batch) byPartition.set(r.partition, (batch = { values: [], timestamps: [], raws: [] }));
      batch.values.push(value);
      batch.timestamps.push(r.timestamp);
      batch.raws.push(raw);
    }
    for (const [partition, r] of last) this.offered.set(`${r.topic}:${partition}`, String(BigInt(r.offset) + 1n));
    if (byPartition.size === 0) {
      this.out.wakeForDeadLetters();
      return;
    }
    for (const [partition, batch] of byPartition) {
      const at = `${this.spec.topic}:${partition}`;
      await this.out.emit(partition, batch, { [at]: this.offered.get(at)! });
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The reading side of the Kafka exchange: one keyed subtask's key-group partitions turned back into input messages,
 * each partition's order kept. Per upstream channel:
 * - watermarks are the minimum over the partitions read (a channel's watermark has passed only when it has passed in
 *   every partition), idleness and the end of input count once every partition says so;
 * - broadcast records are applied once (a per-channel sequence number), the first time any partition delivers them;
 * - a checkpoint barrier is handed on once every partition delivered it (partition-alignment.ts).
 * Records of an older incarnation (run) are skipped (kafka-exchange-wire.ts).
 */
import { unpack } from 'msgpackr';
import type { ConsumedRecord, KafkaConnector, KafkaReader, StartOffset } from '@weir/kafka';
import { decodeKey } from '../../keygroups';
import type { SourcePump } from '../connectors/sources';
import type { InputQueue } from '../queue';
import { type KeyedRecord, MIN_WATERMARK } from '../records';
import { ExchangeError } from './exchange';
import {
  BARRIER,
  BROADCAST,
  BROADCAST_BARRIER,
  BROADCAST_END,
  DATA,
  END,
  IDLE,
  isBroadcastKind,
  WATERMARK,
  type WireMessage,
} from './kafka-exchange-wire';
import { offsetBefore } from '../operators/keyed-operator';
import { BroadcastAlignment } from './broadcast-alignment';
import { PartitionAlignment } from './partition-alignment';

interface Held {
  readonly partition: number;
  readonly offset: bigint;
  readonly message: WireMessage;
  readonly record: ConsumedRecord;
}

export interface ExchangeReaderOptions {
  readonly readerId: string;
  readonly topic: string;
  /** The key groups (partitions) this subtask owns, each with where to start (a restored position, or earliest). */
  readonly keyGroups: readonly { readonly keyGroup: number; readonly offset: StartOffset }[];
  /** The topic's partitions (the job's max parallelism): the others are standby, adopted without a consumer swap. */
  readonly partitions: number;
  readonly queue: InputQueue;
  readonly dataChannels: number;
  readonly broadcastChannels: number;
  /** Records written by an older incarnation are skipped. */
  readonly incarnation: number;
  /**
   * A subtask that joins a running run (a live rescale): it starts owning nothing and waits for key groups to be
   * moved to it, instead of ending at once as a subtask given no key group does.
   */
  readonly joining?: boolean;
}

/**
 * What a subtask's reader knew of its upstream when it released a key group: handed to a subtask that joined the run
 * and adopts its first key group, so that it continues where the old owner stood (broadcasts applied, event time).
 */
export interface ReaderStanding {
  /** Per broadcast channel, the last broadcast applied. */
  readonly broadcastSeq: readonly number[];
  /** Per data channel, the watermark handed on. */
  readonly watermarks: readonly number[];
}

export class KafkaExchangePump implements SourcePump {
  private stopped = false;
  private readonly reader: KafkaReader;
  private readonly topic: string;
  private readonly queue: InputQueue;
  private readonly incarnation: number;
  private readonly marks = new Map<number, number[]>();
  /** Per data channel (an upstream subtask; a live rescale adds channels as they first appear). */
  private readonly emitted: number[];
  private readonly ended: Set<number>[];
  private readonly idle: Set<number>[];
  /** Per data lane, the sender count its pending barrier carries (handed on with the barrier). */
  private readonly barrierSenders = new Map<string, number>();
  private readonly broadcastSeq: number[];
  private readonly broadcastEnded: Set<number>[];
  private readonly partitions: Set<number>;
  private readonly alignment = new PartitionAlignment<Held>();
  /** A broadcast input of one channel applies at one cut of every partition (broadcast-alignment.ts). */
  private readonly broadcasts: BroadcastAlignment<Held> | null;
  private pendingBroadcast: WireMessage | null = null;
  /** Per source partition (`topic:partition`), the furthest source batch end handed on: where a broadcast applies. */
  private readonly handedPositions = new Map<string, string>();
  /** Source positions of the data records gathered per channel, handed with them (KeyedOperator.processBatch). */
  private sourcePositions: (Record<string, string> | undefined)[];
  /** Per key group: the offset after the last record handed to the subtask (held records excluded). */
  private readonly offered = new Map<number, string>();
  /** Records handed on in the dispatch under way: one offset per partition and poll, not one per record. */
  private readonly handedNow = new Map<number, ConsumedRecord>();
  /** Channels whose per-partition marks moved since data was last offered (their combined watermark is recomputed then). */
  private readonly movedMarks = new Set<number>();
  /** Data records of the dispatch under way, per channel (alignment holds a subtask's input per channel). */
  private data: (KeyedRecord[] | undefined)[];
  /** Assignment changes wait for the loop to be between polls (or for the reader to start). */
  private readonly changes: ((stopped?: boolean) => Promise<void>)[] = [];
  private readonly joining: boolean;
  /** Set until a joining subtask adopts its first key group: it then takes the old owner's standing. */
  private fresh: boolean;

  constructor(kafka: KafkaConnector, options: ExchangeReaderOptions) {
    const { dataChannels, broadcastChannels } = options;
    this.topic = options.topic;
    this.queue = options.queue;
    this.incarnation = options.incarnation;
    this.partitions = new Set(options.keyGroups.map((k) => k.keyGroup));
    this.joining = options.joining ?? false;
    this.fresh = this.joining && this.partitions.size === 0;
    for (const p of this.partitions) this.marks.set(p, new Array<number>(dataChannels).fill(MIN_WATERMARK));
    for (const { keyGroup, offset } of options.keyGroups) if (offset !== 'earliest' && offset !== 'latest') this.offered.set(keyGroup, offset);
    this.emitted = new Array<number>(dataChannels).fill(MIN_WATERMARK);
    this.ended = Array.from({ length: dataChannels }, () => new Set<number>());
    this.idle = Array.from({ length: dataChannels }, () => new Set<number>());
    this.broadcastSeq = new Array<number>(broadcastChannels).fill(0);
    this.broadcastEnded = Array.from({ length: broadcastChannels }, () => new Set<number>());
    this.data = new Array(dataChannels);
    this.sourcePositions = new Array(dataChannels);
    this.broadcasts = broadcastChannels === 1 ? new BroadcastAlignment<Held>() : null;
    this.reader = kafka.reader({
      readerId: options.readerId,
      assignments: options.keyGroups.map(({ keyGroup, offset }) => ({ topic: this.topic, partition: keyGroup, offset })),
      standby: Array.from({ length: options.partitions }, (_, partition) => ({ topic: this.topic, partition })).filter((p) => !this.partitions.has(p.partition)),
      maxBufferedRecords: 20_000,
    });
  }

  async run(): Promise<void> {
    if (this.partitions.size === 0 && !this.joining) {
      // Owns no key group: nothing will ever arrive, so it must not hold back event time or the end of the job.
      for (let c = 0; c < this.emitted.length; c++) this.queue.offer({ kind: 'end', channel: c, lane: 'data' });
      for (let c = 0; c < this.broadcastSeq.length; c++) this.queue.offer({ kind: 'end', channel: c, lane: 'broadcast' });
      for (const change of this.changes.splice(0)) void change(true);
      return;
    }
    await this.reader.start();
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
      // Changes still waiting will never run: their callers learn so.
      for (const change of this.changes.splice(0)) void change(true);
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
   * Per key group, the offset after the last record handed to the subtask: where a later incarnation restoring this
   * subtask's checkpoint starts reading (everything of this incarnation is skipped then, so any offset it reached is
   * a safe start; this one skips least).
   */
  exchangePositions(): Readonly<Record<string, string>> {
    return Object.fromEntries([...this.offered].map(([kg, offset]) => [String(kg), offset]));
  }

  /**
   * Stops reading a key group's partition. Resolves with the offset after the last record handed to the subtask:
   * the new owner reads on from there, so nothing is lost or read twice. `handOver` is called at that very point,
   * before this reader hands on anything more, with what the reader knew then: it queues the subtask's half of the
   * hand-over (in-band, after exactly the records handed on), whose promise comes back as `handedOver`.
   */
  release<T>(keyGroup: number, handOver: (standing: ReaderStanding) => Promise<T>): Promise<{ offset: string; handedOver: Promise<T> }> {
    return this.change(async () => {
      // A partition this reader does not read has no position here: its new owner would read it from the start.
      if (!this.partitions.has(keyGroup)) throw new ExchangeError(`this reader does not read key group ${keyGroup}'s partition of ${this.topic}: it cannot release it`);
      // A broadcast still being aligned that this partition delivered is read again by the new owner, which may not
      // have applied it; what this partition delivered after it is held, never handed on.
      const held = min(
        min(this.alignment.firstHeldOffset(keyGroup), this.broadcasts?.heldOf(keyGroup)[0]?.offset),
        this.broadcasts?.arrivalOffset(keyGroup),
      );
      const offset = held !== undefined ? held.toString() : (this.offered.get(keyGroup) ?? 'earliest');
      const handedOver = handOver({ broadcastSeq: [...this.broadcastSeq], watermarks: [...this.emitted] });
      handedOver.catch(() => undefined);
      this.partitions.delete(keyGroup);
      this.marks.delete(keyGroup);
      this.offered.delete(keyGroup);
      this.alignment.forget(keyGroup);
      this.broadcasts?.forget(keyGroup);
      for (const set of [...this.ended, ...this.idle, ...this.broadcastEnded]) set.delete(keyGroup);
      // At once, between two polls: what the reader buffered of it is dropped, the rest keeps flowing.
      this.reader.deactivate(this.topic, keyGroup);
      // Without that partition the per-channel minimum can only rise, and a pending barrier may be complete.
      for (let c = 0; c < this.emitted.length; c++) this.recomputeWatermark(c);
      for (const lane of this.alignment.pendingLanes()) this.completeBarrier(lane);
      this.completeBroadcast();
      this.finishDispatch();
      return { offset, handedOver };
    });
  }

  /** A subtask that joined the run and has not adopted a key group yet: it takes the old owner's operator state. */
  get awaitsFirstKeyGroup(): boolean {
    return this.fresh;
  }

  /**
   * Starts reading a key group's partition at `offset`, its watermarks starting where this subtask's are. A joining
   * subtask's first key group brings the old owner's standing: broadcasts up to those it had applied are not applied
   * again, and event time starts where the old owner's stood (a record it would have found late stays late).
   */
  adopt(keyGroup: number, offset: string, standing?: ReaderStanding): Promise<void> {
    return this.change(async () => {
      if (this.fresh && standing) {
        standing.broadcastSeq.forEach((seq, c) => {
          if (c < this.broadcastSeq.length && seq > this.broadcastSeq[c]) this.broadcastSeq[c] = seq;
        });
        standing.watermarks.forEach((watermark, c) => {
          if (c < this.emitted.length && watermark > this.emitted[c]) {
            this.emitted[c] = watermark;
            this.queue.offer({ kind: 'watermark', channel: c, watermark });
          }
        });
      }
      this.fresh = false;
      this.partitions.add(keyGroup);
      this.marks.set(keyGroup, [...this.emitted]);
      this.offered.set(keyGroup, offset);
      await this.reader.activate(this.topic, keyGroup, offset);
    });
  }

  injectBarrier(): void {
    throw new ExchangeError('barriers enter a job at its sources; an exchange reader only hands them on');
  }

  /**
   * A checkpoint was triggered in this process. A subtask that owns no key group (it joined the run and has none
   * yet, or it retires and gave all away) reads no partition, so no barrier can reach it: it passes the barrier on
   * every channel at once. Its cut is empty of input, which is exact: key groups move only between checkpoints.
   */
  onCheckpointTrigger(checkpointId: number): void {
    if (this.partitions.size > 0 || this.stopped) return;
    for (let c = 0; c < this.emitted.length; c++) this.queue.offer({ kind: 'barrier', checkpointId, channel: c, lane: 'data' });
    for (let c = 0; c < this.broadcastSeq.length; c++) this.queue.offer({ kind: 'barrier', checkpointId, channel: c, lane: 'broadcast' });
  }

  /** Runs `fn` between two polls; one asked for before the reader started runs once it has. */
  private change<T>(fn: () => Promise<T>): Promise<T> {
    if (this.stopped) return Promise.reject(new ExchangeError('the exchange reader is not running'));
    return new Promise<T>((resolve, reject) =>
      this.changes.push((stopped) => (stopped ? Promise.resolve(reject(new ExchangeError('the exchange reader stopped'))) : fn().then(resolve, reject))),
    );
  }

  private dispatch(records: readonly ConsumedRecord[]): void {
    for (const r of records) {
      if (!this.partitions.has(r.partition)) continue;
      this.handle(r, unpack(r.value!) as WireMessage);
    }
    this.finishDispatch();
  }

  /** Offers the data gathered and moves each partition's handed-on offset past what was handled. */
  private finishDispatch(): void {
    this.offerData();
    for (const [partition, r] of this.handedNow) this.offered.set(partition, String(BigInt(r.offset) + 1n));
    this.handedNow.clear();
  }

  private handle(r: ConsumedRecord, message: WireMessage): void {
    const kind = message[0];
    if (message[1] < this.incarnation) {
      this.handedNow.set(r.partition, r); // skipped, but read: a restart of this incarnation starts after it
      return;
    }
    const channel = message[2];
    if (channel >= this.emitted.length && !isBroadcastKind(kind)) this.addChannels(channel + 1);
    if (this.broadcasts && !this.broadcasts.idle && this.broadcasts.isBlocked(r.partition)) {
      this.broadcasts.hold({ partition: r.partition, offset: BigInt(r.offset), message, record: r });
      return;
    }
    if (!this.alignment.idle) {
      const lane = isBroadcastKind(kind) ? `b${channel}` : `d${channel}`;
      if (this.alignment.isBlocked(r.partition, lane)) {
        this.alignment.hold(lane, { partition: r.partition, offset: BigInt(r.offset), message, record: r });
        return;
      }
    }
    this.handedNow.set(r.partition, r);
    if (kind === DATA) {
      const keyBytes = r.key!;
      (this.data[channel] ??= []).push({
        value: message[5],
        timestamp: message[3] as number,
        ingestMs: message[4] as number,
        key: decodeKey(keyBytes),
        keyBytes,
        keyGroup: r.partition,
      });
      if (message.length > 6) this.notePosition(channel, message[6] as string, message[7] as string);
      return;
    }
    // A watermark only moves marks: what it allows goes out after the poll's data (later is never wrong for a
    // watermark), so data is not cut into a message per watermark record (every partition carries each of them).
    if (kind === WATERMARK) return this.onWatermark(r.partition, channel, message[3] as number);
    // Other control is ordered with the data before it.
    this.offerData();
    switch (kind) {
      case IDLE:
        return this.onIdle(r.partition, channel);
      case END:
        return this.onEnd(r.partition, channel, message[3] as number | undefined);
      case BROADCAST:
        return this.broadcasts ? this.onAlignedBroadcast(r, message) : this.onBroadcast(channel, message);
      case BROADCAST_END:
        return this.onBroadcastEnd(r.partition, channel);
      case BARRIER:
      case BROADCAST_BARRIER:
        return this.onBarrier(r, message, kind === BARRIER ? `d${channel}` : `b${channel}`);
    }
  }

  /** Offers the data gathered, then the watermarks the marks read since allow. */
  private offerData(): void {
    for (let c = 0; c < this.data.length; c++) {
      const records = this.data[c];
      if (records === undefined) continue;
      const positions = this.sourcePositions[c];
      this.data[c] = undefined;
      this.sourcePositions[c] = undefined;
      this.queue.offer(positions ? { kind: 'data', channel: c, records, positions } : { kind: 'data', channel: c, records });
    }
    if (this.movedMarks.size === 0) return;
    for (const c of this.movedMarks) this.recomputeWatermark(c);
    this.movedMarks.clear();
  }

  /** A record of the source batch that ends at `offset` of source partition `at` is handed on. */
  private notePosition(channel: number, at: string, offset: string): void {
    const gathered = (this.sourcePositions[channel] ??= {});
    const known = gathered[at];
    if (known === undefined || offsetBefore(known, offset)) gathered[at] = offset;
    const handed = this.handedPositions.get(at);
    if (handed === undefined || offsetBefore(handed, offset)) this.handedPositions.set(at, offset);
  }

  private onAlignedBroadcast(r: ConsumedRecord, message: WireMessage): void {
    const channel = message[2];
    const seq = message[6] as number;
    if (seq <= this.broadcastSeq[channel]) return; // applied already (this partition delivers it late)
    const starting = this.broadcasts!.idle;
    const holdThis = this.broadcasts!.arrive(r.partition, seq, BigInt(r.offset));
    if (holdThis) this.broadcasts!.hold({ partition: r.partition, offset: BigInt(r.offset), message, record: r });
    else if (starting) this.pendingBroadcast = message;
    this.completeBroadcast();
  }

  /**
   * Applies the aligned broadcast once every partition delivered it. First, though, whatever waited behind it that
   * belongs to a source batch the subtask already saw part of (another key-group partition delivered that batch's
   * records ahead of the broadcast) is handed on: for every source partition, the input is then split at one offset
   * (records before the broadcast's position were judged by the old rules, every later one by the new), and that
   * offset is what the subtask's input position says. Nothing moves ahead across a held barrier or other control.
   */
  private completeBroadcast(): void {
    const done = this.broadcasts?.complete(this.partitions, (p) => this.broadcastEnded[0].has(p));
    if (!done) return;
    const message = this.pendingBroadcast!;
    this.pendingBroadcast = null;
    this.offerData();
    const later: Held[] = [];
    const barred = new Set<number>();
    for (const item of done.held) {
      const m = item.message;
      const seen = m[0] === DATA && m.length > 6 ? this.handedPositions.get(m[6] as string) : undefined;
      if (!barred.has(item.partition) && seen !== undefined && !offsetBefore(seen, m[7] as string)) {
        this.handle(item.record, m);
        continue;
      }
      later.push(item);
      if (m[0] !== DATA) barred.add(item.partition);
    }
    this.offerData();
    this.onBroadcast(message[2], message);
    for (const item of later) if (this.partitions.has(item.partition)) this.handle(item.record, item.message);
  }

  private onBarrier(r: ConsumedRecord, message: WireMessage, lane: string): void {
    const senders = message[4] as number | undefined;
    if (senders !== undefined && lane[0] === 'd') {
      if (senders > this.emitted.length) this.addChannels(senders);
      this.barrierSenders.set(lane, senders);
    }
    const { holdThis } = this.alignment.arrive(r.partition, lane, message[3] as number);
    if (holdThis) this.alignment.hold(lane, { partition: r.partition, offset: BigInt(r.offset), message, record: r });
    this.completeBarrier(lane);
  }

  /** Hands the lane's barrier on once every partition delivered it, then replays what waited behind it. */
  private completeBarrier(lane: string): void {
    const broadcast = lane[0] === 'b';
    const channel = Number(lane.slice(1));
    const ended = broadcast ? this.broadcastEnded[channel] : this.ended[channel];
    const done = this.alignment.complete(lane, this.partitions, (p) => ended.has(p));
    if (!done) return;
    this.offerData();
    const senders = broadcast ? undefined : this.barrierSenders.get(lane);
    this.queue.offer({ kind: 'barrier', checkpointId: done.checkpointId, channel, lane: broadcast ? 'broadcast' : 'data', ...(senders !== undefined ? { senders } : {}) });
    for (const held of done.replay) {
      if (this.partitions.has(held.partition)) this.handle(held.record, held.message);
    }
  }

  /**
   * A live rescale gave the upstream stage more subtasks: their channels start with no watermark of their own here
   * (the subtask counts them idle until they send one) and nothing ended.
   */
  private addChannels(count: number): void {
    while (this.emitted.length < count) {
      this.emitted.push(MIN_WATERMARK);
      this.ended.push(new Set());
      this.idle.push(new Set());
    }
    for (const marks of this.marks.values()) while (marks.length < count) marks.push(MIN_WATERMARK);
  }

  private onWatermark(partition: number, channel: number, watermark: number): void {
    const marks = this.marks.get(partition);
    if (!marks || watermark <= marks[channel]) return;
    marks[channel] = watermark;
    this.idle[channel].delete(partition);
    this.movedMarks.add(channel);
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

  private onEnd(partition: number, channel: number, senders: number | undefined): void {
    this.ended[channel].add(partition);
    // A partition that ended counts as having delivered a barrier still being collected.
    this.completeBarrier(`d${channel}`);
    if (this.ended[channel].size !== this.partitions.size) return;
    this.queue.offer({ kind: 'end', channel, lane: 'data', ...(senders !== undefined ? { senders } : {}) });
    if (senders !== undefined && channel >= senders) {
      // Retired in a live rescale: a later subtask of that index (a later rescale out) is a new channel.
      this.ended[channel].clear();
      this.idle[channel].clear();
      this.emitted[channel] = MIN_WATERMARK;
      for (const marks of this.marks.values()) marks[channel] = MIN_WATERMARK;
    }
  }

  private onBroadcast(channel: number, message: WireMessage): void {
    const seq = message[6] as number;
    if (seq <= this.broadcastSeq[channel]) return;
    this.broadcastSeq[channel] = seq;
    this.queue.offer({
      kind: 'broadcast',
      channel,
      records: [{ value: message[5], timestamp: message[3] as number, ingestMs: message[4] as number }],
    });
  }

  private onBroadcastEnd(partition: number, channel: number): void {
    this.broadcastEnded[channel].add(partition);
    this.completeBarrier(`b${channel}`);
    this.completeBroadcast();
    if (this.broadcastEnded[channel].size === this.partitions.size) this.queue.offer({ kind: 'end', channel, lane: 'broadcast' });
  }
}

function min(a: bigint | undefined, b: bigint | undefined): bigint | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a < b ? a : b;
}

import type { RoutingTable } from '../../keygroups';
import type { InputQueue } from '../queue';
import type { InputMessage, KeyedRecord, StreamRecord } from '../records';
import { type BroadcastSender, ExchangeError, type KeyGroupMove, type KeyedSender } from './exchange';

/** Hands one key group from its old owner to its new owner; runs in-band in both subtasks' inputs. */
export type KeyGroupHandover = (keyGroup: number, from: number, to: number) => Promise<void>;

/**
 * A keyBy edge inside one process: records are routed key group → subtask through the routing table into bounded
 * input queues. A live move pauses the moving key groups' records (held here), hands their state over in-band, swaps
 * the routing table, and releases the held records to the new owner — nothing is lost or reordered per key.
 */
export class MemoryKeyedExchange implements KeyedSender {
  private held: Map<number, KeyedRecord[]> | null = null;
  private heldControl: { target: 'all'; message: InputMessage }[] = [];
  private moving: Promise<void> = Promise.resolve();

  constructor(
    private readonly targets: readonly InputQueue[],
    private routing: RoutingTable,
  ) {}

  get table(): RoutingTable {
    return this.routing;
  }

  async send(channel: number, records: readonly KeyedRecord[], positions?: Readonly<Record<string, string>>): Promise<void> {
    if (this.targets.length === 1 && this.held === null) {
      // One subtask owns every key group: the batch goes as it is, without being copied into a bucket.
      this.targets[0].offer({ kind: 'data', channel, records, positions });
      return this.targets[0].writable();
    }
    const buckets: KeyedRecord[][] = this.targets.map(() => []);
    for (const r of records) {
      const held = this.held?.get(r.keyGroup);
      if (held) held.push(r);
      else buckets[this.routing.ownerOf(r.keyGroup)].push(r);
    }
    const waits: Promise<void>[] = [];
    for (let t = 0; t < buckets.length; t++) {
      if (buckets[t].length === 0) continue;
      this.targets[t].offer({ kind: 'data', channel, records: buckets[t], positions });
      waits.push(this.targets[t].writable());
    }
    await Promise.all(waits);
  }

  sendWatermark(channel: number, watermark: number): Promise<void> {
    this.toAll({ kind: 'watermark', channel, watermark });
    return Promise.resolve();
  }

  sendIdle(channel: number): Promise<void> {
    this.toAll({ kind: 'idle', channel });
    return Promise.resolve();
  }

  sendEnd(channel: number): Promise<void> {
    this.toAll({ kind: 'end', channel, lane: 'data' });
    return Promise.resolve();
  }

  sendBarrier(channel: number, checkpointId: number): Promise<void> {
    this.toAll({ kind: 'barrier', checkpointId, channel, lane: 'data' });
    return Promise.resolve();
  }

  /**
   * Moves key groups to new owners while the job runs. Watermarks and other control messages are held during the
   * move so event time cannot overtake the held records. Moves run one after another.
   */
  move(moves: readonly KeyGroupMove[], handover: KeyGroupHandover): Promise<RoutingTable> {
    const next = this.moving.then(() => this.runMove(moves, handover));
    this.moving = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  private async runMove(moves: readonly KeyGroupMove[], handover: KeyGroupHandover): Promise<RoutingTable> {
    const effective = moves.filter((m) => this.routing.ownerOf(m.keyGroup) !== m.toSubtask);
    const nextTable = this.routing.withMoves(effective);
    if (effective.length === 0) return this.routing;
    this.held = new Map(effective.map((m) => [m.keyGroup, []]));
    try {
      for (const m of effective) {
        await handover(m.keyGroup, this.routing.ownerOf(m.keyGroup), m.toSubtask);
      }
      this.routing = nextTable;
    } catch (err) {
      throw new ExchangeError(`key-group move failed, routing unchanged: ${(err as Error).message}`);
    } finally {
      const held = this.held;
      this.held = null;
      for (const [keyGroup, records] of held) {
        if (records.length > 0) this.targets[this.routing.ownerOf(keyGroup)].offer({ kind: 'data', channel: -1, records });
      }
      const control = this.heldControl;
      this.heldControl = [];
      for (const { message } of control) this.toAll(message);
    }
    return this.routing;
  }

  private toAll(message: InputMessage): void {
    if (this.held) {
      this.heldControl.push({ target: 'all', message });
      return;
    }
    for (const t of this.targets) t.offer(message);
  }
}

/** A broadcast edge inside one process. FIFO queues give the ordering guarantee (see docs/engine.md). */
export class MemoryBroadcastExchange implements BroadcastSender {
  constructor(private readonly targets: readonly InputQueue[]) {}

  async send(channel: number, records: readonly StreamRecord[]): Promise<void> {
    for (const t of this.targets) t.offer({ kind: 'broadcast', channel, records });
    await Promise.all(this.targets.map((t) => t.writable()));
  }

  sendEnd(channel: number): Promise<void> {
    for (const t of this.targets) t.offer({ kind: 'end', channel, lane: 'broadcast' });
    return Promise.resolve();
  }

  sendBarrier(channel: number, checkpointId: number): Promise<void> {
    for (const t of this.targets) t.offer({ kind: 'barrier', checkpointId, channel, lane: 'broadcast' });
    return Promise.resolve();
  }
}

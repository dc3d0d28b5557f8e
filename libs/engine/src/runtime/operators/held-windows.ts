import type { KeyedStateBackend, StateRef } from '@weir/state';
import { decodeKey, type KeyValue } from '../../keygroups';
import { assignWindows, type TimeWindow, type WindowAssigner, type WindowFunctionSpec } from '../../sdk/windows';
import type { KeyedRecord } from '../records';
import { FIRING_CHUNK } from './keyed-operator';
import { BackedKey, type EndSlot, OpenWindows, type WindowEntry } from './open-windows';

/** What the in-memory window path needs from its window operator. */
export interface HeldWindowsHost {
  readonly backend: KeyedStateBackend;
  /** `${operatorId}/__windows`: one entry per key holding all its open windows. */
  readonly namespace: string;
  readonly assigner: Exclude<WindowAssigner, { kind: 'session' }>;
  readonly fn: WindowFunctionSpec<KeyValue, unknown, unknown>;
  readonly lateness: number;
  readonly lateTag: string | undefined;
  /** Set for the merge of a splittable window's partials: each element names its window (instead of the assigner). */
  readonly windowOf?: (value: unknown) => TimeWindow;
  /** Windows (key × window) held in memory before keys are spilled to the backend. */
  readonly maxHeld: number;
  /** The job's number of key groups (the in-memory windows are kept per key group). */
  readonly keyGroups: number;
  now(): number;
  watermark(): number;
  /** A window result; `ingestMs` undefined means the record being processed (a late re-firing). */
  emit(value: unknown, timestamp: number, ingestMs?: number): void;
  /** Hands the results emitted so far downstream and waits (between chunks of a firing). */
  handOver(): Promise<void>;
  emitSide(tagId: string, value: unknown, timestamp: number): void;
  deadLetter(value: unknown, timestamp: number, err: unknown): void;
}

/**
 * Tumbling and sliding windows in memory (like Flink's heap keyed state): a record updates its accumulator in the
 * slot of its window's end with no state-backend call; a watermark fires the due slots and drops the expired ones.
 * The backend receives the windows, per key, before anything reads it (`persist`: snapshots, moves, barriers) and
 * when more than `maxHeld` windows are held (keys untouched since the backend last received them are spilled first,
 * and read back with one batched prefetch when a record or a firing touches them).
 */
export class HeldWindows {
  private readonly open: OpenWindows;
  /** Tumbling: the start of the last record's window. */
  private lastStart = Number.NaN;

  constructor(private readonly host: HeldWindowsHost) {
    this.open = new OpenWindows(host.keyGroups);
  }

  /** Spills beyond the limit after a batch; the batch's own keys stay (the batch may still need them). */
  endBatch(records: readonly KeyedRecord[]): void {
    if (this.open.heldCount > this.host.maxHeld) this.spill(records);
  }

  /** Reads back the spilled keys a batch touches (one awaited call), so that `onElement` stays synchronous. */
  async prefetch(records: readonly KeyedRecord[]): Promise<void> {
    const open = this.open;
    if (open.spilledCount === 0) return;
    let spilled: Set<BackedKey> | undefined;
    for (const r of records) {
      const backed = open.backedOf(r.key, r.keyGroup);
      if (backed?.spilled) (spilled ??= new Set()).add(backed);
    }
    if (spilled) await this.reload([...spilled]);
  }

  onElement(record: KeyedRecord): void {
    const assigner = this.host.assigner;
    let accepted = false;
    const windowOf = this.host.windowOf;
    if (windowOf !== undefined) {
      const w = windowOf(record.value);
      accepted = this.add(record, w.start, w.end);
    } else if (assigner.kind === 'tumbling') {
      // The common case without assignWindows' array and object per record, nor its float modulo when the record
      // falls in the same window as the one before.
      const ts = record.timestamp;
      let start = this.lastStart;
      if (!(ts >= start && ts < start + assigner.sizeMs)) {
        const size = assigner.sizeMs;
        start = this.lastStart = ts - ((((ts - assigner.offsetMs) % size) + size) % size);
      }
      accepted = this.add(record, start, start + assigner.sizeMs);
    } else {
      for (const w of assignWindows(assigner, record.timestamp)) if (this.add(record, w.start, w.end)) accepted = true;
    }
    if (!accepted && this.host.lateTag) this.host.emitSide(this.host.lateTag, record.value, record.timestamp);
  }

  /** Adds one value to one window of its key; false when the window is past its allowed lateness. */
  private add(record: KeyedRecord, start: number, end: number): boolean {
    const { host, open } = this;
    const watermark = host.watermark();
    if (end - 1 + host.lateness <= watermark) return false;
    const slot = open.slot(start, end, watermark);
    const key = record.key;
    const keyGroup = record.keyGroup;
    let cells = slot.dirty[keyGroup];
    let a = cells?.get(key);
    if (a === undefined && !cells?.has(key)) {
      cells = open.dirtyCells(slot, keyGroup, key);
      if (cells.has(key)) {
        a = cells.get(key);
      } else {
        a = host.fn.createAccumulator();
        cells.set(key, a);
        open.added();
      }
    }
    const next = host.fn.add(record.value, a);
    // In-place accumulators return the one they were given: no second map write.
    if (next !== a) cells!.set(key, next);
    // Late but within the allowed lateness: the window fired already, so it fires again at once.
    if (end - 1 <= watermark) this.emitWindow(slot.window, key, next, undefined);
    return true;
  }

  /** Fires the windows the watermark completed (in end order), then drops those past their allowed lateness. */
  async advance(watermark: number): Promise<void> {
    const open = this.open;
    const due = open.due(watermark);
    const expired = open.expired(watermark, this.host.lateness);
    if (due.length === 0 && expired.length === 0) return;
    if (open.spilledCount > 0) {
      const spilled = new Set<BackedKey>();
      for (const slot of [...due, ...expired]) for (const backed of slot.spilled ?? []) spilled.add(backed);
      if (spilled.size > 0) await this.reload([...spilled]);
    }
    const now = this.host.now();
    let fired = 0;
    for (const slot of due) {
      slot.fired = true;
      for (const cells of slot.maps()) {
        // One array of the keys, then get(): iterating the map across awaits costs an object per window fired.
        const keys = Array.from(cells.keys());
        for (let i = 0; i < keys.length; i++) {
          this.emitWindow(slot.window, keys[i], cells.get(keys[i]), now);
          if (++fired % FIRING_CHUNK === 0) await this.host.handOver();
        }
      }
    }
    for (const slot of expired) this.purge(slot);
  }

  private emitWindow(window: TimeWindow, key: KeyValue, a: unknown, ingestMs: number | undefined): void {
    const host = this.host;
    try {
      if (host.fn.emitSingle) host.emit(host.fn.emitSingle(key, window, a), window.end - 1, ingestMs);
      else for (const value of host.fn.emit(key, window, a)) host.emit(value, window.end - 1, ingestMs);
    } catch (err) {
      // A late re-firing throws into the record's own dead letter (the caller catches); a watermark firing here.
      if (ingestMs === undefined) throw err;
      host.deadLetter({ timer: window.end - 1, domain: 'event', key }, window.end - 1, err);
    }
  }

  /** Drops an expired slot whole; keys the backend holds lose that window there too. */
  private purge(slot: EndSlot): void {
    const open = this.open;
    open.drop(slot);
    if (open.backedCount === 0) return;
    for (const [key, keyGroup] of slot.entries()) {
      const backed = open.backedOf(key, keyGroup);
      if (backed === undefined) continue;
      if (open.hasWindows(key, keyGroup)) {
        backed.dirty = true;
      } else {
        this.host.backend.delete(this.ref(backed));
        open.deleteBacked(backed);
      }
    }
  }

  /** Writes every key whose windows changed since the last write, so that snapshots and scans of the backend are complete. */
  persist(): void {
    const open = this.open;
    const changed = open.dirtyKeys();
    for (const backed of open.allBacked()) {
      if (!backed.dirty || backed.spilled) continue;
      let keys = changed.get(backed.keyGroup);
      if (keys === undefined) changed.set(backed.keyGroup, (keys = new Set()));
      keys.add(backed.key);
    }
    for (const [keyGroup, keys] of changed) for (const key of keys) this.write(key, keyGroup);
    open.markClean();
  }

  /** Puts one key's in-memory windows into the backend (or deletes its entry when it has none left). */
  private write(key: KeyValue, keyGroup: number): BackedKey {
    const open = this.open;
    let backed = open.backedOf(key, keyGroup);
    if (backed === undefined) open.setBacked((backed = new BackedKey(key, keyGroup)));
    const windows = open.windowsOf(key, keyGroup);
    if (windows.length > 0) this.host.backend.put(this.ref(backed), windows);
    else this.host.backend.delete(this.ref(backed));
    backed.dirty = false;
    return backed;
  }

  /**
   * Spills keys' windows (down to 3/4 of the limit, in bulk), those untouched since the backend last received them
   * first (see OpenWindows.spillCandidates). Keys of the batch just handled stay.
   */
  private spill(batch: readonly KeyedRecord[]): void {
    const { open, host } = this;
    const inBatch = new Set<KeyValue>();
    for (const r of batch) inBatch.add(r.key);
    const target = Math.floor(host.maxHeld * 0.75);
    for (const [key, keyGroup] of [...open.spillCandidates()]) {
      if (open.heldCount <= target) break;
      // A key's window in another slot may have come first: it is spilled already.
      if (inBatch.has(key) || open.backedOf(key, keyGroup)?.spilled) continue;
      const known = open.backedOf(key, keyGroup);
      const backed = known === undefined || known.dirty || open.isDirty(key, keyGroup) ? this.write(key, keyGroup) : known;
      open.spill(backed);
    }
  }

  /** Reads spilled keys' windows back from the backend (one batched read). */
  private async reload(spilled: readonly BackedKey[]): Promise<void> {
    const refs = spilled.map((b) => this.ref(b));
    await this.host.backend.prefetch(refs);
    const now = this.host.now();
    const watermark = this.host.watermark();
    for (let i = 0; i < spilled.length; i++) this.open.reload(spilled[i], this.host.backend.get<WindowEntry[]>(refs[i], now) ?? [], watermark);
  }

  /**
   * Loads one key group's windows from the backend (start, restore, adopt); beyond the limit they stay there. A key
   * group adopted from another subtask may bring windows this subtask's event time has passed already (its input was
   * ahead of the old owner's): without allowed lateness a window in state has not fired (it fires and is purged in
   * one step), so those fire here and now, once, and are dropped at the next advance.
   */
  async load(keyGroup: number): Promise<void> {
    const { open, host } = this;
    const watermark = host.watermark();
    const now = host.now();
    for await (const [keyBytes, windows] of host.backend.entries<WindowEntry[]>(keyGroup, host.namespace, now)) {
      const backed = new BackedKey(decodeKey(keyBytes), keyGroup, keyBytes);
      if (host.lateness === 0) {
        for (const w of windows) if (w.e - 1 <= watermark) this.emitWindow({ start: w.s, end: w.e }, backed.key, w.a, now);
      }
      open.load(backed, windows, open.heldCount < host.maxHeld, watermark);
    }
  }


  /** Forgets a key group (it left, or is about to be replaced by a restore). */
  forgetKeyGroup(keyGroup: number): void {
    this.open.forgetKeyGroup(keyGroup);
  }

  private ref(backed: BackedKey): StateRef {
    return { keyGroup: backed.keyGroup, namespace: this.host.namespace, key: backed.keyBytes };
  }
}

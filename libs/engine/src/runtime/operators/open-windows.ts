import { encodeKey, type KeyValue } from '../../keygroups';
import type { TimeWindow } from '../../sdk/windows';

/** One open window of one key: [s, e) and its accumulator. Plain data so any state backend can store it. */
export interface WindowEntry {
  s: number;
  e: number;
  a: unknown;
}

/** One key group's windows in one slot: key → accumulator (no object per window beyond the accumulator). */
export type Cells = Map<KeyValue, unknown>;

/** A key the state backend holds an entry for (its windows, as of the last write). */
export class BackedKey {
  private bytes: Uint8Array | undefined;
  /** The key's list of windows changed other than through a cell (one of them was purged). */
  dirty = false;
  /** Its windows are only in the backend; they are read back before the key is touched or fired. */
  spilled = false;

  constructor(
    readonly key: KeyValue,
    readonly keyGroup: number,
    keyBytes?: Uint8Array,
  ) {
    this.bytes = keyBytes;
  }

  get keyBytes(): Uint8Array {
    return (this.bytes ??= encodeKey(this.key));
  }
}

/**
 * Every open window ending at `end`, per key group: the windows changed since the backend last received them
 * (`dirty`), and those it holds exactly as they are here (`clean`: persisted and untouched since, or read back from
 * it). A key is in at most one of the two. In a job that never snapshots, `clean` stays empty.
 */
export class EndSlot {
  readonly dirty: (Cells | undefined)[];
  readonly clean: (Cells | undefined)[];
  /** Keys whose window here is only in the backend (read back before this slot fires or is purged). */
  spilled: Set<BackedKey> | undefined = undefined;
  /** Handed to every firing of this slot's windows (TimeWindow is read-only). */
  readonly window: TimeWindow;

  constructor(
    readonly start: number,
    readonly end: number,
    /** The watermark passed end − 1 (a slot created past its end counts as fired already). */
    public fired: boolean,
    keyGroups: number,
  ) {
    this.window = { start, end };
    this.dirty = new Array<Cells | undefined>(keyGroups).fill(undefined);
    this.clean = new Array<Cells | undefined>(keyGroups).fill(undefined);
  }

  /** The key's accumulator here, dirty or clean; `undefined` when it has no window here (see `has`). */
  get(key: KeyValue, keyGroup: number): unknown {
    const dirty = this.dirty[keyGroup]?.get(key);
    return dirty !== undefined ? dirty : this.clean[keyGroup]?.get(key);
  }

  has(key: KeyValue, keyGroup: number): boolean {
    return this.dirty[keyGroup]?.has(key) === true || this.clean[keyGroup]?.has(key) === true;
  }

  /** Every non-empty map of this slot, dirty and clean. */
  *maps(): IterableIterator<Cells> {
    for (const side of [this.dirty, this.clean]) for (const cells of side) if (cells !== undefined && cells.size > 0) yield cells;
  }

  /** Every window here: key, key group and accumulator. */
  *entries(): IterableIterator<[KeyValue, number, unknown]> {
    for (let kg = 0; kg < this.dirty.length; kg++) {
      const dirty = this.dirty[kg];
      if (dirty !== undefined) for (const [key, a] of dirty) yield [key, kg, a];
      const clean = this.clean[kg];
      if (clean !== undefined) for (const [key, a] of clean) yield [key, kg, a];
    }
  }
}

/**
 * The open windows of one window operator subtask (tumbling and sliding), in memory, laid out like a hand-written
 * loop would: one Map per window end (and key group), keyed by the key, holding the accumulator. A record costs one
 * lookup in the slot of its window; firing walks that slot; purging drops it whole. Open window ends are few, so the
 * slots are a small Map and the last one used is cached. Per key group so that a key group leaves (a move) by
 * dropping its maps, and so that nothing per window but the accumulator is allocated.
 *
 * Nothing per key is kept beyond the accumulators until the backend holds a copy of a key's windows (after a
 * persist, a spill or a restore): those keys are in `backedIn`, which is empty in a job that never snapshots.
 *
 * A key is identified with its key group throughout: a split hot key (a splittable window's records spread over
 * several key groups) has windows in more than one key group, possibly on the same subtask.
 */
export class OpenWindows {
  private readonly slots = new Map<number, EndSlot>();
  /** Per key group, the keys the backend holds an entry for. */
  private readonly backedIn: (Map<KeyValue, BackedKey> | undefined)[];
  private backedKeys = 0;
  private last: EndSlot | undefined = undefined;
  private cellCount = 0;
  private spilledKeys = 0;

  constructor(private readonly keyGroups: number) {
    this.backedIn = new Array<Map<KeyValue, BackedKey> | undefined>(keyGroups).fill(undefined);
  }

  /** Keys the backend holds an entry for. */
  get backedCount(): number {
    return this.backedKeys;
  }

  backedOf(key: KeyValue, keyGroup: number): BackedKey | undefined {
    return this.backedIn[keyGroup]?.get(key);
  }

  setBacked(backed: BackedKey): void {
    const map = (this.backedIn[backed.keyGroup] ??= new Map());
    if (!map.has(backed.key)) this.backedKeys++;
    map.set(backed.key, backed);
  }

  deleteBacked(backed: BackedKey): void {
    if (this.backedIn[backed.keyGroup]?.delete(backed.key)) this.backedKeys--;
  }

  *allBacked(): IterableIterator<BackedKey> {
    for (const map of this.backedIn) if (map !== undefined) yield* map.values();
  }

  /** Windows (key × window) held in memory. */
  get heldCount(): number {
    return this.cellCount;
  }

  get spilledCount(): number {
    return this.spilledKeys;
  }

  /** The slot of windows ending at `end`, created (fired when already past the watermark) if absent. */
  slot(start: number, end: number, watermark: number): EndSlot {
    const last = this.last;
    if (last !== undefined && last.end === end) return last;
    let slot = this.slots.get(end);
    if (slot === undefined) {
      slot = new EndSlot(start, end, end - 1 <= watermark, this.keyGroups);
      this.slots.set(end, slot);
    }
    this.last = slot;
    return slot;
  }

  /**
   * The dirty cells of one key group in `slot`, for a record to update: a key found clean there moves to dirty
   * first (the backend's copy is about to be stale). Returns the map; the caller sets the key's new accumulator.
   */
  dirtyCells(slot: EndSlot, keyGroup: number, key: KeyValue): Cells {
    const dirty = (slot.dirty[keyGroup] ??= new Map());
    const clean = slot.clean[keyGroup];
    if (clean !== undefined && clean.size > 0) {
      const a = clean.get(key);
      if (a !== undefined || clean.has(key)) {
        clean.delete(key);
        dirty.set(key, a);
      }
    }
    return dirty;
  }

  /** Counts a window added to a slot's cells (by the caller, through `dirtyCells`). */
  added(): void {
    this.cellCount++;
  }

  /** Slots not fired yet whose end − 1 the watermark reached, in end order. */
  due(watermark: number): EndSlot[] {
    const out: EndSlot[] = [];
    for (const slot of this.slots.values()) if (!slot.fired && slot.end - 1 <= watermark) out.push(slot);
    return out.sort((a, b) => a.end - b.end);
  }

  /** Slots whose windows are past their allowed lateness, in end order. */
  expired(watermark: number, lateness: number): EndSlot[] {
    const out: EndSlot[] = [];
    for (const slot of this.slots.values()) if (slot.end - 1 + lateness <= watermark) out.push(slot);
    return out.sort((a, b) => a.end - b.end);
  }

  /** Forgets a slot and every window in it (its spilled keys must have been read back first). */
  drop(slot: EndSlot): void {
    this.slots.delete(slot.end);
    if (this.last === slot) this.last = undefined;
    for (let kg = 0; kg < this.keyGroups; kg++) this.cellCount -= (slot.dirty[kg]?.size ?? 0) + (slot.clean[kg]?.size ?? 0);
  }

  /** The key's windows in memory, in end order (copies: the backend keeps what it is given until it flushes). */
  windowsOf(key: KeyValue, keyGroup: number): WindowEntry[] {
    const out: WindowEntry[] = [];
    for (const slot of this.slots.values()) {
      if (slot.has(key, keyGroup)) out.push({ s: slot.start, e: slot.end, a: slot.get(key, keyGroup) });
    }
    return out.length > 1 ? out.sort((a, b) => a.e - b.e) : out;
  }

  /** Whether the key has any window left, in memory or spilled. */
  hasWindows(key: KeyValue, keyGroup: number): boolean {
    const backed = this.backedOf(key, keyGroup);
    for (const slot of this.slots.values()) if (slot.has(key, keyGroup) || (backed !== undefined && slot.spilled?.has(backed))) return true;
    return false;
  }

  /** Whether any of the key's windows changed since the backend last received them. */
  isDirty(key: KeyValue, keyGroup: number): boolean {
    for (const slot of this.slots.values()) if (slot.dirty[keyGroup]?.has(key)) return true;
    return false;
  }

  /** Every key with a changed window, per key group. */
  dirtyKeys(): Map<number, Set<KeyValue>> {
    const out = new Map<number, Set<KeyValue>>();
    for (const slot of this.slots.values()) {
      for (let kg = 0; kg < this.keyGroups; kg++) {
        const dirty = slot.dirty[kg];
        if (dirty === undefined || dirty.size === 0) continue;
        let keys = out.get(kg);
        if (keys === undefined) out.set(kg, (keys = new Set()));
        for (const key of dirty.keys()) keys.add(key);
      }
    }
    return out;
  }

  /** The backend received every window: all of them are clean now. */
  markClean(): void {
    for (const slot of this.slots.values()) {
      for (let kg = 0; kg < this.keyGroups; kg++) {
        const dirty = slot.dirty[kg];
        if (dirty === undefined || dirty.size === 0) continue;
        const clean = slot.clean[kg];
        if (clean === undefined || clean.size === 0) {
          // The usual case: hand the map over whole instead of moving its entries.
          slot.clean[kg] = dirty;
          slot.dirty[kg] = undefined;
        } else {
          for (const [key, a] of dirty) clean.set(key, a);
          dirty.clear();
        }
      }
    }
  }

  /**
   * Keys to spill first: those with clean windows only (untouched since the backend received them), then the
   * others, oldest window end first and in insertion order within a map — an approximation of least recently used
   * that needs no bookkeeping per record.
   */
  *spillCandidates(): IterableIterator<[KeyValue, number]> {
    const slots = [...this.slots.values()].sort((a, b) => a.end - b.end);
    for (const side of ['clean', 'dirty'] as const) {
      for (const slot of slots) {
        for (let kg = 0; kg < this.keyGroups; kg++) {
          const cells = slot[side][kg];
          if (cells !== undefined) for (const key of cells.keys()) yield [key, kg];
        }
      }
    }
  }

  /** Moves a key's windows out of memory; the caller has written them to the backend. Returns the cells freed. */
  spill(backed: BackedKey): number {
    const kg = backed.keyGroup;
    let freed = 0;
    for (const slot of this.slots.values()) {
      if (!(slot.dirty[kg]?.delete(backed.key) || slot.clean[kg]?.delete(backed.key))) continue;
      (slot.spilled ??= new Set()).add(backed);
      freed++;
    }
    this.cellCount -= freed;
    backed.spilled = true;
    backed.dirty = false;
    this.spilledKeys++;
    return freed;
  }

  /** A spilled key's windows, read back from the backend, are in memory again (clean). */
  reload(backed: BackedKey, windows: readonly WindowEntry[], watermark: number): void {
    if (!backed.spilled) return;
    for (const slot of this.slots.values()) slot.spilled?.delete(backed);
    backed.spilled = false;
    this.spilledKeys--;
    this.putClean(backed, windows, watermark);
  }

  /** A key read from the backend (start, restore, adopt): in memory, or left spilled beyond the limit. */
  load(backed: BackedKey, windows: readonly WindowEntry[], inMemory: boolean, watermark: number): void {
    this.setBacked(backed);
    if (inMemory) return this.putClean(backed, windows, watermark);
    backed.spilled = true;
    this.spilledKeys++;
    for (const w of windows) (this.slot(w.s, w.e, watermark).spilled ??= new Set()).add(backed);
  }

  /** Drops everything held for one key group (it left, or is about to be replaced). */
  forgetKeyGroup(keyGroup: number): void {
    for (const slot of this.slots.values()) {
      this.cellCount -= (slot.dirty[keyGroup]?.size ?? 0) + (slot.clean[keyGroup]?.size ?? 0);
      slot.dirty[keyGroup] = undefined;
      slot.clean[keyGroup] = undefined;
    }
    const backedHere = this.backedIn[keyGroup];
    if (backedHere === undefined) return;
    this.backedIn[keyGroup] = undefined;
    this.backedKeys -= backedHere.size;
    for (const backed of backedHere.values()) {
      if (!backed.spilled) continue;
      this.spilledKeys--;
      for (const slot of this.slots.values()) slot.spilled?.delete(backed);
    }
  }

  private putClean(backed: BackedKey, windows: readonly WindowEntry[], watermark: number): void {
    const kg = backed.keyGroup;
    for (const w of windows) {
      const slot = this.slot(w.s, w.e, watermark);
      (slot.clean[kg] ??= new Map()).set(backed.key, w.a);
      this.cellCount++;
    }
  }
}

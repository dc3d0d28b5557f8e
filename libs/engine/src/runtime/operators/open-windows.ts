import { encodeKey, type KeyValue } from '../../keygroups';
import type { TimeWindow } from '../../sdk/windows';

/** One open window of one key: [s, e) and its accumulator. Plain data so any state backend can store it. */
export interface WindowEntry {
  s: number;
  e: number;
  a: unknown;
}

/** One key's window in memory: its accumulator, in the slot of the window's end. */
export class WindowCell {
  constructor(
    readonly key: KeyValue,
    readonly keyGroup: number,
    public a: unknown,
    /** The last batch that touched it: newer than `OpenWindows.cleanEpoch` means the backend's copy is stale. */
    public epoch: number,
  ) {}
}

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

/** Every open window ending at `end`, one cell per key, plus the spilled keys with a window here. */
export class EndSlot {
  readonly cells = new Map<KeyValue, WindowCell>();
  spilled: Set<KeyValue> | undefined = undefined;
  /** Handed to every firing of this slot's windows (TimeWindow is read-only). */
  readonly window: TimeWindow;

  constructor(
    readonly start: number,
    readonly end: number,
    /** The watermark passed end − 1 (a slot created past its end counts as fired already). */
    public fired: boolean,
  ) {
    this.window = { start, end };
  }
}

/**
 * The open windows of one window operator subtask (tumbling and sliding), in memory, laid out like a hand-written
 * loop would: one Map per window end, keyed by the key, holding the accumulator. A record costs one lookup in the
 * slot of its window; firing walks that slot; purging drops it whole. Open window ends are few, so the slots are a
 * small Map and the last one used is cached.
 *
 * Nothing per key is kept beyond the cells until the backend holds a copy of a key's windows (after a persist, a
 * spill or a restore): those keys are in `backed`, which is empty in a job that never snapshots.
 */
export class OpenWindows {
  private readonly slots = new Map<number, EndSlot>();
  readonly backed = new Map<KeyValue, BackedKey>();
  private last: EndSlot | undefined = undefined;
  private cellCount = 0;
  private spilledKeys = 0;
  /** Bumped per batch: cells touched in the current batch are never spilled. */
  epoch = 0;
  /** Cells with an epoch above this changed since the backend last received them. */
  cleanEpoch = -1;

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
      slot = new EndSlot(start, end, end - 1 <= watermark);
      this.slots.set(end, slot);
    }
    this.last = slot;
    return slot;
  }

  /** A new window of `key` in `slot`. */
  add(slot: EndSlot, key: KeyValue, keyGroup: number, accumulator: unknown, epoch = this.epoch): WindowCell {
    const cell = new WindowCell(key, keyGroup, accumulator, epoch);
    slot.cells.set(key, cell);
    this.cellCount++;
    return cell;
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
    this.cellCount -= slot.cells.size;
  }

  /** The key's windows in memory, in end order (copies: the backend keeps what it is given until it flushes). */
  windowsOf(key: KeyValue): WindowEntry[] {
    const out: WindowEntry[] = [];
    for (const slot of this.slots.values()) {
      const cell = slot.cells.get(key);
      if (cell !== undefined) out.push({ s: slot.start, e: slot.end, a: cell.a });
    }
    return out.length > 1 ? out.sort((a, b) => a.e - b.e) : out;
  }

  /** Whether the key has any window left, in memory or spilled. */
  hasWindows(key: KeyValue): boolean {
    for (const slot of this.slots.values()) if (slot.cells.has(key) || slot.spilled?.has(key)) return true;
    return false;
  }

  /** Every cell, slot by slot. */
  *allCells(): IterableIterator<WindowCell> {
    for (const slot of this.slots.values()) yield* slot.cells.values();
  }

  /** Moves a key's windows out of memory; the caller has written them to the backend. Returns the cells freed. */
  spill(backed: BackedKey): number {
    let freed = 0;
    for (const slot of this.slots.values()) {
      if (!slot.cells.delete(backed.key)) continue;
      (slot.spilled ??= new Set()).add(backed.key);
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
    for (const slot of this.slots.values()) slot.spilled?.delete(backed.key);
    backed.spilled = false;
    this.spilledKeys--;
    for (const w of windows) this.add(this.slot(w.s, w.e, watermark), backed.key, backed.keyGroup, w.a, this.cleanEpoch);
  }

  /** A key read from the backend (start, restore, adopt): in memory, or left spilled beyond the limit. */
  load(backed: BackedKey, windows: readonly WindowEntry[], inMemory: boolean, watermark: number): void {
    this.backed.set(backed.key, backed);
    if (inMemory) {
      for (const w of windows) this.add(this.slot(w.s, w.e, watermark), backed.key, backed.keyGroup, w.a, this.cleanEpoch);
      return;
    }
    backed.spilled = true;
    this.spilledKeys++;
    for (const w of windows) (this.slot(w.s, w.e, watermark).spilled ??= new Set()).add(backed.key);
  }

  /** Drops everything held for one key group (it left, or is about to be replaced). */
  forgetKeyGroup(keyGroup: number): void {
    for (const slot of this.slots.values()) {
      for (const [key, cell] of slot.cells) {
        if (cell.keyGroup !== keyGroup) continue;
        slot.cells.delete(key);
        this.cellCount--;
      }
    }
    for (const [key, backed] of this.backed) {
      if (backed.keyGroup !== keyGroup) continue;
      this.backed.delete(key);
      if (!backed.spilled) continue;
      this.spilledKeys--;
      for (const slot of this.slots.values()) slot.spilled?.delete(key);
    }
  }
}

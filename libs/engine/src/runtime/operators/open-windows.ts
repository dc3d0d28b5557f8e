import { encodeKey, type KeyValue } from '../../keygroups';

/** One open window of one key: [s, e) and its accumulator. Plain data so any state backend can store it. */
export interface WindowEntry {
  s: number;
  e: number;
  a: unknown;
}

/**
 * One key's open windows as the window operator holds them in memory. `windows` undefined means spilled: the
 * state backend holds them and they are read back (prefetched) before the key is touched again.
 */
export class HeldKey {
  private bytes: Uint8Array | undefined;
  /** The backend holds a copy of this key's windows (possibly older than memory). */
  stored = false;
  /** Changed since it was last written to the backend. */
  dirty = false;
  /** Forgotten (all windows gone, or its key group left): index slots skip it instead of searching for it. */
  removed = false;

  constructor(
    readonly key: KeyValue,
    readonly keyGroup: number,
    public windows: WindowEntry[] | undefined,
    /** The last batch that touched it: spilling picks the least recent. */
    public epoch: number,
    keyBytes?: Uint8Array,
  ) {
    this.bytes = keyBytes;
  }

  /** The serialised key, built only when the windows go to or come from the backend. */
  get keyBytes(): Uint8Array {
    return (this.bytes ??= encodeKey(this.key));
  }
}

/**
 * The keys with a window ending at one timestamp; `fired` once the watermark passed end − 1. A key is appended once
 * per window it opens; entries of keys removed since stay until the slot goes (readers skip them), which keeps
 * opening a window an array push instead of a hash-set insert.
 */
export interface EndSlot {
  readonly end: number;
  readonly keys: HeldKey[];
  fired: boolean;
}

/**
 * The open windows of every key of one window operator subtask (tumbling and sliding), in memory: a Map from key to
 * its windows, plus an index from window end to the keys with a window ending there, so firing walks only the
 * windows due (no per-key timers). Open window ends are few, so finding the due ones is a scan over a small Map.
 */
export class OpenWindows {
  readonly keys = new Map<KeyValue, HeldKey>();
  private readonly slots = new Map<number, EndSlot>();
  /** Keys whose windows are in memory (not spilled). */
  private held = 0;
  /** Keys whose windows are spilled: while none are, a batch needs no look-ups before it runs. */
  private spilled = 0;
  /** Bumped per batch: keys touched in the current batch are never spilled. */
  epoch = 0;

  get heldCount(): number {
    return this.held;
  }

  get spilledCount(): number {
    return this.spilled;
  }

  /** The key's entry (in memory, nothing stored) for a key that had no open window; it gets `first` as its window. */
  create(key: KeyValue, keyGroup: number, first: WindowEntry): HeldKey {
    const held = new HeldKey(key, keyGroup, [first], this.epoch);
    this.keys.set(key, held);
    this.held++;
    return held;
  }

  /** Adds a key restored from the backend; `inMemory` false keeps its windows there until it is touched. */
  addStored(key: KeyValue, keyGroup: number, keyBytes: Uint8Array, windows: WindowEntry[], inMemory: boolean, watermark: number): void {
    const existing = this.keys.get(key);
    if (existing !== undefined) this.remove(existing);
    const held = new HeldKey(key, keyGroup, inMemory ? windows : undefined, this.epoch, keyBytes);
    held.stored = true;
    this.keys.set(key, held);
    if (inMemory) this.held++;
    else this.spilled++;
    for (const w of windows) this.index(held, w.e, watermark);
  }

  /** Records that `held` has a window ending at `end`; a slot created past its end counts as fired already. */
  index(held: HeldKey, end: number, watermark: number): void {
    let slot = this.slots.get(end);
    if (slot === undefined) {
      slot = { end, keys: [], fired: end - 1 <= watermark };
      this.slots.set(end, slot);
    }
    slot.keys.push(held);
  }

  /** A spilled key's windows are back in memory. */
  reload(held: HeldKey, windows: WindowEntry[]): void {
    if (held.windows !== undefined) return;
    held.windows = windows;
    this.held++;
    this.spilled--;
  }

  /** A key's windows now live only in the backend. */
  spill(held: HeldKey): void {
    if (held.windows === undefined) return;
    held.windows = undefined;
    held.stored = true;
    held.dirty = false;
    this.held--;
    this.spilled++;
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

  dropSlot(slot: EndSlot): void {
    this.slots.delete(slot.end);
  }

  /** Forgets a key entirely (its windows are all gone, or its key group left). */
  remove(held: HeldKey): void {
    if (this.keys.get(held.key) !== held) return;
    this.keys.delete(held.key);
    held.removed = true;
    if (held.windows !== undefined) this.held--;
    else this.spilled--;
  }

  /** Every key of one key group (release / adopt). */
  keysOf(keyGroup: number): HeldKey[] {
    const out: HeldKey[] = [];
    for (const held of this.keys.values()) if (held.keyGroup === keyGroup) out.push(held);
    return out;
  }

  /** In-memory keys not touched by the current batch, least recently touched first. */
  spillCandidates(count: number): HeldKey[] {
    const candidates: HeldKey[] = [];
    for (const held of this.keys.values()) if (held.windows !== undefined && held.epoch !== this.epoch) candidates.push(held);
    candidates.sort((a, b) => a.epoch - b.epoch);
    return candidates.slice(0, count);
  }
}

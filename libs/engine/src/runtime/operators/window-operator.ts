import type { StateRef } from '@weir/state';
import { decodeKey, type KeyValue } from '../../keygroups';
import { assignWindows, type TimeWindow, type WindowAssigner, type WindowFunctionSpec, type WindowOptions } from '../../sdk/windows';
import type { KeyedRecord } from '../records';
import type { DueTimer } from '../timers';
import { KeyedOperator, type KeyedOperatorEnv } from './keyed-operator';
import { type EndSlot, type HeldKey, OpenWindows, type WindowEntry } from './open-windows';

/** Keys whose open windows stay in memory before the least recently used ones are spilled to the state backend. */
export const DEFAULT_MAX_HELD_WINDOW_KEYS = 500_000;

/**
 * Event-time windows (tumbling, sliding, session). In the state backend, per key, the open windows are one entry
 * (`${operatorId}/__windows`): that is what snapshots, moves and restores carry.
 *
 * Tumbling and sliding windows run on an in-memory map of open windows (like Flink's heap keyed state): a record
 * updates its accumulator synchronously with no state-backend call, and windows fire from an index by window end
 * when the watermark passes end − 1. The backend receives the windows before anything reads it (checkpoint
 * barriers, key-group snapshots and moves: `persistState`) and when more than `maxHeldKeys` keys are held (the
 * least recently used are spilled and prefetched back when touched). Session windows, which merge, keep their
 * windows in the backend and fire through event-time timers.
 *
 * With allowed lateness a window is purged when the watermark reaches end − 1 + lateness; a late record within the
 * lateness updates its window and fires it again at once; a record later than that goes to the late side output (or
 * is dropped).
 */
export class WindowOperator extends KeyedOperator {
  private readonly namespace: string;
  private readonly lateness: number;
  private readonly lateTag: string | undefined;
  /** Null for session windows (the backend path). */
  private readonly windows: OpenWindows | null;

  constructor(
    env: KeyedOperatorEnv,
    private readonly assigner: WindowAssigner,
    private readonly fn: WindowFunctionSpec<KeyValue, unknown, unknown>,
    options: WindowOptions<unknown>,
    private readonly maxHeldKeys = DEFAULT_MAX_HELD_WINDOW_KEYS,
  ) {
    // Window timers follow from the open windows, so they are not stored twice: loadTimers re-arms them.
    super(env, [], false);
    this.namespace = `${env.operatorId}/__windows`;
    this.lateness = options.allowedLatenessMs ?? 0;
    this.lateTag = options.lateOutputTag?.id;
    this.windows = assigner.kind === 'session' ? null : new OpenWindows();
  }

  protected override usesKeyedStatePerRecord(): boolean {
    // In-memory windows touch neither keyed state nor timers per record; sessions do.
    return this.windows === null;
  }

  protected override extraNamespaces(): string[] {
    // In-memory windows need no prefetch per record: spilled keys are read back in prefetchBatch.
    return this.windows ? [] : [this.namespace];
  }

  protected override async loadTimers(keyGroup: number): Promise<void> {
    if (this.windows) return this.loadHeld(this.windows, keyGroup);
    for await (const [keyBytes, windows] of this.env.backend.entries<WindowEntry[]>(keyGroup, this.namespace, this.env.clock.now())) {
      for (const w of windows) {
        if (w.e - 1 > this.watermark) this.timers.arm('event', w.e - 1, keyGroup, keyBytes);
        if (this.lateness > 0) this.timers.arm('event', w.e - 1 + this.lateness, keyGroup, keyBytes);
      }
    }
  }

  /**
   * Within a batch, a key's windows are read from state once and written back once at the end of the batch (a hot
   * key appears many times per batch); each state access costs an id build and a cache lookup.
   */
  private readonly batchWindows = new Map<KeyValue, { ref: StateRef; windows: WindowEntry[] }>();

  protected override beginBatch(): void {
    if (this.windows) this.windows.epoch++;
    else this.batchWindows.clear();
  }

  protected override endBatch(): void {
    if (this.windows) return this.spillIfOver(this.windows);
    for (const { ref, windows } of this.batchWindows.values()) this.env.backend.put(ref, windows);
    this.batchWindows.clear();
  }

  protected onElement(record: KeyedRecord): void {
    if (this.windows) return this.onHeldElement(this.windows, record);
    let held = this.batchWindows.get(record.key);
    if (!held) {
      const ref = this.ref();
      held = { ref, windows: this.env.backend.get<WindowEntry[]>(ref, this.env.clock.now()) ?? [] };
    }
    let windows = held.windows;
    const fireNow: WindowEntry[] = [];
    let accepted = false;
    for (const w of assignWindows(this.assigner, record.timestamp)) {
      if (this.isExpired(w.end)) continue;
      accepted = true;
      let entry: WindowEntry;
      let isNew = true;
      if (this.assigner.kind === 'session') {
        ({ windows, entry } = this.mergeSession(windows, w));
      } else {
        const found = windows.find((x) => x.s === w.start && x.e === w.end);
        entry = found ?? { s: w.start, e: w.end, a: this.fn.createAccumulator() };
        isNew = !found;
        if (!found) windows = [...windows, entry];
      }
      const known = !isNew && this.assigner.kind !== 'session';
      entry.a = this.fn.add(record.value, entry.a);
      // A window that already existed has its timers armed; only new (or merged) windows need them.
      if (!known) this.armTimers(entry.e);
      if (entry.e - 1 <= this.watermark) fireNow.push(entry);
    }
    if (!accepted) {
      if (this.lateTag) this.emitSide(this.lateTag, record.value, record.timestamp);
      return;
    }
    held.windows = windows;
    this.batchWindows.set(record.key, held);
    for (const entry of fireNow) this.emitWindow(entry);
  }

  protected onTimerFired(timer: DueTimer): void {
    // In-memory windows register no timers; only the session path gets here.
    const ref = this.ref();
    const windows = this.env.backend.get<WindowEntry[]>(ref, this.env.clock.now());
    if (!windows) return;
    const keep: WindowEntry[] = [];
    for (const w of windows) {
      if (w.e - 1 === timer.timestamp) this.emitWindow(w);
      if (!this.isExpiredAt(w.e, timer.timestamp)) keep.push(w);
    }
    if (keep.length === 0) this.env.backend.delete(ref);
    else if (keep.length !== windows.length) this.env.backend.put(ref, keep);
  }

  /** Merges a new session window with every existing window it overlaps or touches. */
  private mergeSession(windows: WindowEntry[], w: TimeWindow): { windows: WindowEntry[]; entry: WindowEntry } {
    let start = w.start;
    let end = w.end;
    let acc: unknown = undefined;
    const rest: WindowEntry[] = [];
    for (const x of windows) {
      if (x.s <= end && x.e >= start) {
        start = Math.min(start, x.s);
        end = Math.max(end, x.e);
        acc = acc === undefined ? x.a : this.fn.merge!(acc, x.a);
        this.disarmTimers(x.e);
      } else {
        rest.push(x);
      }
    }
    // The caller re-arms the merged window's timers (deleting then registering the same timestamp is safe).
    const entry: WindowEntry = { s: start, e: end, a: acc ?? this.fn.createAccumulator() };
    return { windows: [...rest, entry], entry };
  }

  private emitWindow(w: WindowEntry): void {
    const key = this.ctx.key;
    for (const value of this.fn.emit(key, { start: w.s, end: w.e }, w.a)) this.emitOne(value, w.e - 1);
  }

  // ---- in-memory path (tumbling, sliding) ----

  private onHeldElement(open: OpenWindows, record: KeyedRecord): void {
    let held = open.keys.get(record.key);
    if (held !== undefined) held.epoch = open.epoch;
    let accepted = false;
    if (this.assigner.kind === 'tumbling') {
      // The common case without assignWindows' array and object per record.
      const ts = record.timestamp;
      const size = this.assigner.sizeMs;
      const start = ts - ((((ts - this.assigner.offsetMs) % size) + size) % size);
      accepted = this.addToWindow(open, held, record, start, start + size) !== undefined;
    } else {
      for (const w of assignWindows(this.assigner, record.timestamp)) {
        const added = this.addToWindow(open, held, record, w.start, w.end);
        if (added === undefined) continue;
        held = added;
        accepted = true;
      }
    }
    if (!accepted && this.lateTag) this.emitSide(this.lateTag, record.value, record.timestamp);
  }

  /**
   * Adds one value to one window of the key. Returns the key's entry (created with its first window), or undefined
   * when the window is past its allowed lateness (nothing is created then).
   */
  private addToWindow(open: OpenWindows, held: HeldKey | undefined, record: KeyedRecord, start: number, end: number): HeldKey | undefined {
    if (this.isExpired(end)) return undefined;
    let entry: WindowEntry | undefined;
    if (held === undefined) {
      entry = { s: start, e: end, a: this.fn.createAccumulator() };
      held = open.create(record.key, record.keyGroup, entry);
      open.index(held, end, this.watermark);
    } else {
      const windows = held.windows!;
      for (let i = 0; i < windows.length; i++) {
        if (windows[i].e === end) {
          entry = windows[i];
          break;
        }
      }
      if (entry === undefined) {
        entry = { s: start, e: end, a: this.fn.createAccumulator() };
        windows.push(entry);
        open.index(held, end, this.watermark);
      }
    }
    entry.a = this.fn.add(record.value, entry.a);
    held.dirty = true;
    // Late but within the allowed lateness: the window fired already, so it fires again at once.
    if (end - 1 <= this.watermark) this.emitWindow(entry);
    return held;
  }

  protected override async prefetchBatch(records: readonly KeyedRecord[]): Promise<void> {
    if (!this.windows) return super.prefetchBatch(records);
    if (this.windows.spilledCount === 0) return;
    let spilled: Set<HeldKey> | undefined;
    for (const r of records) {
      const held = this.windows.keys.get(r.key);
      if (held !== undefined && held.windows === undefined) (spilled ??= new Set()).add(held);
    }
    if (spilled) await this.reloadSpilled(this.windows, [...spilled]);
  }

  /** Reads spilled keys' windows back from the backend (one batched read). */
  private async reloadSpilled(open: OpenWindows, spilled: readonly HeldKey[]): Promise<void> {
    if (spilled.length === 0) return;
    const refs = spilled.map((h) => this.heldRef(h));
    await this.env.backend.prefetch(refs);
    const now = this.env.clock.now();
    for (let i = 0; i < spilled.length; i++) open.reload(spilled[i], this.env.backend.get<WindowEntry[]>(refs[i], now)?.map((w) => ({ ...w })) ?? []);
  }

  override async advanceWatermark(watermark: number): Promise<void> {
    if (watermark <= this.watermark) return;
    await super.advanceWatermark(watermark);
    if (this.windows) await this.fireHeld(this.windows, watermark);
  }

  /** Fires the windows the watermark completed (in end order), then purges those past their allowed lateness. */
  private async fireHeld(open: OpenWindows, watermark: number): Promise<void> {
    const due = open.due(watermark);
    const expired = open.expired(watermark, this.lateness);
    if (due.length === 0 && expired.length === 0) return;
    const spilled = new Set<HeldKey>();
    for (const slot of [...due, ...expired]) for (const held of slot.keys) if (!held.removed && held.windows === undefined) spilled.add(held);
    await this.reloadSpilled(open, [...spilled]);
    const now = this.env.clock.now();
    for (const slot of due) {
      slot.fired = true;
      for (const held of slot.keys) {
        if (held.removed) continue;
        const entry = held.windows!.find((w) => w.e === slot.end);
        if (entry) this.fireEntry(held, entry, now);
      }
    }
    for (const slot of expired) this.purge(open, slot);
    this.drain();
  }

  private fireEntry(held: HeldKey, entry: WindowEntry, now: number): void {
    try {
      for (const value of this.fn.emit(held.key, { start: entry.s, end: entry.e }, entry.a)) {
        this.emitRecord({ value, timestamp: entry.e - 1, ingestMs: now });
      }
    } catch (err) {
      this.deadLetter({ timer: entry.e - 1, domain: 'event', key: held.key }, undefined, entry.e - 1, err);
    }
  }

  private purge(open: OpenWindows, slot: EndSlot): void {
    open.dropSlot(slot);
    for (const held of slot.keys) {
      if (held.removed) continue;
      // Most keys have one open window (tumbling): then the key goes, without building an empty array.
      const only = held.windows!.length === 1 && held.windows![0].e === slot.end;
      const windows = only ? [] : held.windows!.filter((w) => w.e !== slot.end);
      if (windows.length > 0) {
        held.windows = windows;
        held.dirty = true;
        continue;
      }
      open.remove(held);
      if (held.stored) this.env.backend.delete(this.heldRef(held));
    }
  }

  /** Spills the least recently used keys' windows to the backend once more than maxHeldKeys are held. */
  private spillIfOver(open: OpenWindows): void {
    if (open.heldCount <= this.maxHeldKeys) return;
    // Down to 3/4 of the limit, so that spilling happens in bulk now and then, not a few keys every batch.
    for (const held of open.spillCandidates(open.heldCount - Math.floor(this.maxHeldKeys * 0.75))) {
      if (held.dirty || !held.stored) this.env.backend.put(this.heldRef(held), copyWindows(held.windows!));
      open.spill(held);
    }
  }

  /** Writes every changed in-memory window to the backend, so that snapshots and scans of it are complete. */
  override async persistState(): Promise<void> {
    const open = this.windows;
    if (!open) return;
    for (const held of open.keys.values()) {
      if (held.windows === undefined || !held.dirty) continue;
      this.env.backend.put(this.heldRef(held), copyWindows(held.windows));
      held.stored = true;
      held.dirty = false;
    }
  }

  protected override forgetKeyGroup(keyGroup: number): void {
    if (!this.windows) return;
    for (const held of this.windows.keysOf(keyGroup)) this.windows.remove(held);
  }

  /** Loads one key group's windows from the backend (start, restore, adopt); beyond the limit they stay there. */
  private async loadHeld(open: OpenWindows, keyGroup: number): Promise<void> {
    for await (const [keyBytes, windows] of this.env.backend.entries<WindowEntry[]>(keyGroup, this.namespace, this.env.clock.now())) {
      const inMemory = open.heldCount < this.maxHeldKeys;
      open.addStored(decodeKey(keyBytes), keyGroup, keyBytes, inMemory ? copyWindows(windows) : windows, inMemory, this.watermark);
    }
  }

  private heldRef(held: HeldKey): StateRef {
    return { keyGroup: held.keyGroup, namespace: this.namespace, key: held.keyBytes };
  }

  private armTimers(end: number): void {
    // A window already past its end fires in onElement; re-arming would fire it once more at the next watermark.
    if (end - 1 > this.watermark) this.ctx.timers.registerEventTimeTimer(end - 1);
    if (this.lateness > 0) this.ctx.timers.registerEventTimeTimer(end - 1 + this.lateness);
  }

  private disarmTimers(end: number): void {
    this.ctx.timers.deleteEventTimeTimer(end - 1);
    if (this.lateness > 0) this.ctx.timers.deleteEventTimeTimer(end - 1 + this.lateness);
  }

  /** A window is gone once the watermark passed end − 1 + allowed lateness. */
  private isExpired(end: number): boolean {
    return this.isExpiredAt(end, this.watermark);
  }

  private isExpiredAt(end: number, time: number): boolean {
    return end - 1 + this.lateness <= time;
  }

  private ref() {
    return this.currentRef(this.namespace);
  }
}

/** The backend keeps what it is given by reference until it flushes: hand it a copy memory will not mutate. */
function copyWindows(windows: readonly WindowEntry[]): WindowEntry[] {
  return windows.map((w) => ({ s: w.s, e: w.e, a: w.a }));
}

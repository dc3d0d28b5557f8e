import type { StateRef } from '@weir/state';
import type { KeyValue } from '../../keygroups';
import { assignWindows, type TimeWindow, type WindowAssigner, type WindowFunctionSpec, type WindowOptions } from '../../sdk/windows';
import type { KeyedRecord } from '../records';
import type { DueTimer } from '../timers';
import { KeyedOperator, type KeyedOperatorEnv } from './keyed-operator';
import { HeldWindows } from './held-windows';
import type { WindowEntry } from './open-windows';

/** Windows (key × window) held in memory before keys' windows are spilled to the state backend. */
export const DEFAULT_MAX_HELD_WINDOW_KEYS = 500_000;

/**
 * Event-time windows (tumbling, sliding, session). In the state backend, per key, the open windows are one entry
 * (`${operatorId}/__windows`): that is what snapshots, moves and restores carry.
 *
 * Tumbling and sliding windows run in memory (HeldWindows, one Map per window end): a record updates its
 * accumulator synchronously with no state-backend call, and windows fire by window end when the watermark passes
 * end − 1. The backend receives the windows before anything reads it (checkpoint barriers, key-group snapshots and
 * moves: `persistState`) and when more than `maxHeldKeys` windows are held (keys untouched since the last write
 * are spilled first, and prefetched back when touched). Session windows, which merge, keep their windows in the backend and
 * fire through event-time timers.
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
  private readonly windows: HeldWindows | null;

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
    this.windows =
      assigner.kind === 'session'
        ? null
        : new HeldWindows({
            backend: env.backend,
            namespace: this.namespace,
            assigner,
            fn,
            lateness: this.lateness,
            lateTag: this.lateTag,
            maxHeld: maxHeldKeys,
            keyGroups: env.maxParallelism,
            now: () => env.clock.now(),
            watermark: () => this.watermark,
            emit: (value, timestamp, ingestMs) => (ingestMs === undefined ? this.emitOne(value, timestamp) : this.emitRecord({ value, timestamp, ingestMs })),
            emitSide: (tag, value, timestamp) => this.emitSide(tag, value, timestamp),
            handOver: () => this.handOver(),
            deadLetter: (value, timestamp, err) => this.deadLetter(value, undefined, timestamp, err),
          });
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
    if (this.windows) return this.windows.load(keyGroup);
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
    if (!this.windows) this.batchWindows.clear();
  }

  protected override endBatch(records: readonly KeyedRecord[]): void {
    if (this.windows) return this.windows.endBatch(records);
    for (const { ref, windows } of this.batchWindows.values()) this.env.backend.put(ref, windows);
    this.batchWindows.clear();
  }

  protected onElement(record: KeyedRecord): void {
    if (this.windows) return this.windows.onElement(record);
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

  // ---- in-memory path (tumbling, sliding): HeldWindows ----

  protected override async prefetchBatch(records: readonly KeyedRecord[]): Promise<void> {
    if (!this.windows) return super.prefetchBatch(records);
    await this.windows.prefetch(records);
  }

  override async advanceWatermark(watermark: number): Promise<void> {
    if (watermark <= this.watermark) return;
    await super.advanceWatermark(watermark);
    if (!this.windows) return;
    await this.windows.advance(watermark);
    this.drain();
  }

  /** Writes every changed in-memory window to the backend, so that snapshots and scans of it are complete. */
  override async persistState(): Promise<void> {
    this.windows?.persist();
  }

  protected override forgetKeyGroup(keyGroup: number): void {
    this.windows?.forgetKeyGroup(keyGroup);
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

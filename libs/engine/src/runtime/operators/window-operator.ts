import type { StateRef } from '@weir/state';
import type { KeyValue } from '../../keygroups';
import { assignWindows, type TimeWindow, type WindowAssigner, type WindowFunctionSpec, type WindowOptions, type WindowPartial } from '../../sdk/windows';
import type { KeyedRecord } from '../records';
import type { DueTimer } from '../timers';
import type { HeldState, KeyedLogic, KeyedScope } from './keyed-logic';
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
 * moves: `persist`) and when more than `maxHeldKeys` windows are held (keys untouched since the last write are
 * spilled first, and prefetched back when touched). Session windows, which merge, keep their windows in the backend
 * and fire through event-time timers (SessionWindows below).
 *
 * With allowed lateness a window is purged when the watermark reaches end − 1 + lateness; a late record within the
 * lateness updates its window and fires it again at once; a record later than that goes to the late side output (or
 * is dropped).
 */
export function windowOperator(
  env: KeyedOperatorEnv,
  assigner: WindowAssigner,
  fn: WindowFunctionSpec<KeyValue, unknown, unknown>,
  options: WindowOptions<unknown>,
  maxHeldKeys = DEFAULT_MAX_HELD_WINDOW_KEYS,
  /** A splittable window's second operator: each element (a WindowPartial) names its own window. */
  phase?: 'partials' | 'merge',
): KeyedOperator {
  const namespace = `${env.operatorId}/__windows`;
  const lateness = options.allowedLatenessMs ?? 0;
  const lateTag = options.lateOutputTag?.id;
  // Window timers follow from the open windows, so they are not stored twice: loading a key group re-arms them.
  return new KeyedOperator(env, { states: [], durableTimers: false }, (scope): KeyedLogic => {
    if (assigner.kind === 'session') return new SessionWindows(scope, namespace, assigner, fn, lateness, lateTag);
    const { outputs } = scope;
    const windows = new HeldWindows({
      backend: env.backend,
      namespace,
      assigner,
      fn,
      lateness,
      lateTag,
      ...(phase === 'merge' ? { windowOf: (value: unknown) => value as WindowPartial } : {}),
      maxHeld: maxHeldKeys,
      keyGroups: env.maxParallelism,
      now: () => env.clock.now(),
      watermark: () => scope.watermark,
      emit: (value, timestamp, ingestMs) => (ingestMs === undefined ? outputs.emit(value, timestamp) : outputs.emitRecord({ value, timestamp, ingestMs })),
      emitSide: (tag, value, timestamp) => outputs.emitSide(tag, value, timestamp),
      handOver: () => outputs.handOver(),
      deadLetter: (value, timestamp, err) => scope.deadLetter(value, undefined, timestamp, err),
    });
    return {
      onElement: (record) => windows.onElement(record),
      // In-memory windows register no timers.
      onTimer: () => undefined,
      held: {
        // No prefetch per record and no key address per record: spilled keys are read back by prefetch.
        namespaces: [],
        perRecordState: false,
        prefetch: (records) => windows.prefetch(records),
        endBatch: (records) => windows.endBatch(records),
        load: (keyGroup) => windows.load(keyGroup),
        advance: (watermark) => windows.advance(watermark),
        persist: () => windows.persist(),
        forget: (keyGroup) => windows.forgetKeyGroup(keyGroup),
      },
    };
  });
}

/** Session windows: per key, its windows in the backend, merged as records arrive, fired by event-time timers. */
class SessionWindows implements KeyedLogic {
  /**
   * Within a batch, a key's windows are read from state once and written back once at the end of the batch (a hot
   * key appears many times per batch); each state access costs an id build and a cache lookup.
   */
  private readonly batchWindows = new Map<KeyValue, { ref: StateRef; windows: WindowEntry[] }>();
  readonly held: HeldState;

  constructor(
    private readonly scope: KeyedScope,
    private readonly namespace: string,
    private readonly assigner: WindowAssigner,
    private readonly fn: WindowFunctionSpec<KeyValue, unknown, unknown>,
    private readonly lateness: number,
    private readonly lateTag: string | undefined,
  ) {
    const { env, timers } = scope;
    this.held = {
      namespaces: [namespace],
      perRecordState: true,
      beginBatch: () => this.batchWindows.clear(),
      endBatch: () => {
        for (const { ref, windows } of this.batchWindows.values()) env.backend.put(ref, windows);
        this.batchWindows.clear();
      },
      load: async (keyGroup: number) => {
        for await (const [keyBytes, windows] of env.backend.entries<WindowEntry[]>(keyGroup, namespace, env.clock.now())) {
          for (const w of windows) {
            // A window this subtask's event time has passed already (adopted from a subtask whose input was behind)
            // fires at its next advance; without lateness one in state has not fired yet.
            if (w.e - 1 > scope.watermark || lateness === 0) timers.arm('event', w.e - 1, keyGroup, keyBytes);
            if (lateness > 0) timers.arm('event', w.e - 1 + lateness, keyGroup, keyBytes);
          }
        }
      },
    };
  }

  onElement(record: KeyedRecord): void {
    const { env, outputs } = this.scope;
    let held = this.batchWindows.get(record.key);
    if (!held) {
      const ref = this.scope.ref(this.namespace);
      held = { ref, windows: env.backend.get<WindowEntry[]>(ref, env.clock.now()) ?? [] };
    }
    let windows = held.windows;
    const fireNow: WindowEntry[] = [];
    let accepted = false;
    for (const w of assignWindows(this.assigner, record.timestamp)) {
      if (this.isExpiredAt(w.end, this.scope.watermark)) continue;
      accepted = true;
      let entry: WindowEntry;
      ({ windows, entry } = this.merge(windows, w));
      entry.a = this.fn.add(record.value, entry.a);
      this.armTimers(entry.e);
      if (entry.e - 1 <= this.scope.watermark) fireNow.push(entry);
    }
    if (!accepted) {
      if (this.lateTag) outputs.emitSide(this.lateTag, record.value, record.timestamp);
      return;
    }
    held.windows = windows;
    this.batchWindows.set(record.key, held);
    for (const entry of fireNow) this.emitWindow(entry);
  }

  onTimer(timer: DueTimer): void {
    const { env } = this.scope;
    const ref = this.scope.ref(this.namespace);
    const windows = env.backend.get<WindowEntry[]>(ref, env.clock.now());
    if (!windows) return;
    const keep: WindowEntry[] = [];
    for (const w of windows) {
      if (w.e - 1 === timer.timestamp) this.emitWindow(w);
      if (!this.isExpiredAt(w.e, timer.timestamp)) keep.push(w);
    }
    if (keep.length === 0) env.backend.delete(ref);
    else if (keep.length !== windows.length) env.backend.put(ref, keep);
  }

  /** Merges a new session window with every existing window it overlaps or touches. */
  private merge(windows: WindowEntry[], w: TimeWindow): { windows: WindowEntry[]; entry: WindowEntry } {
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
    const key = this.scope.ctx.key;
    for (const value of this.fn.emit(key, { start: w.s, end: w.e }, w.a)) this.scope.outputs.emit(value, w.e - 1);
  }

  private armTimers(end: number): void {
    const timers = this.scope.ctx.timers;
    // A window already past its end fires in onElement; re-arming would fire it once more at the next watermark.
    if (end - 1 > this.scope.watermark) timers.registerEventTimeTimer(end - 1);
    if (this.lateness > 0) timers.registerEventTimeTimer(end - 1 + this.lateness);
  }

  private disarmTimers(end: number): void {
    const timers = this.scope.ctx.timers;
    timers.deleteEventTimeTimer(end - 1);
    if (this.lateness > 0) timers.deleteEventTimeTimer(end - 1 + this.lateness);
  }

  /** A window is gone once event time passed end − 1 + allowed lateness. */
  private isExpiredAt(end: number, time: number): boolean {
    return end - 1 + this.lateness <= time;
  }
}

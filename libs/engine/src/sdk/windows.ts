import type { KeyValue } from '../keygroups';
import type { OutputTag } from './functions';

/** A half-open event-time interval [start, end). Its results carry the timestamp end - 1. */
export interface TimeWindow {
  readonly start: number;
  readonly end: number;
}

export type WindowAssigner =
  | { readonly kind: 'tumbling'; readonly sizeMs: number; readonly offsetMs: number }
  | { readonly kind: 'sliding'; readonly sizeMs: number; readonly slideMs: number; readonly offsetMs: number }
  | { readonly kind: 'session'; readonly gapMs: number };

export class InvalidWindowError extends Error {
  override readonly name = 'InvalidWindowError';
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new InvalidWindowError(`${name} must be a positive number of ms, got ${value}`);
  return value;
}

export function tumbling(sizeMs: number, offsetMs = 0): WindowAssigner {
  return { kind: 'tumbling', sizeMs: positive('sizeMs', sizeMs), offsetMs };
}

export function sliding(sizeMs: number, slideMs: number, offsetMs = 0): WindowAssigner {
  positive('sizeMs', sizeMs);
  positive('slideMs', slideMs);
  if (slideMs > sizeMs) throw new InvalidWindowError(`slideMs (${slideMs}) must not exceed sizeMs (${sizeMs})`);
  return { kind: 'sliding', sizeMs, slideMs, offsetMs };
}

export function session(gapMs: number): WindowAssigner {
  return { kind: 'session', gapMs: positive('gapMs', gapMs) };
}

/** The windows an element with timestamp `ts` belongs to (before session merging). */
export function assignWindows(assigner: WindowAssigner, ts: number): TimeWindow[] {
  switch (assigner.kind) {
    case 'tumbling': {
      const start = ts - mod(ts - assigner.offsetMs, assigner.sizeMs);
      return [{ start, end: start + assigner.sizeMs }];
    }
    case 'sliding': {
      const out: TimeWindow[] = [];
      const last = ts - mod(ts - assigner.offsetMs, assigner.slideMs);
      for (let start = last; start > ts - assigner.sizeMs; start -= assigner.slideMs) {
        out.push({ start, end: start + assigner.sizeMs });
      }
      return out;
    }
    case 'session':
      return [{ start: ts, end: ts + assigner.gapMs }];
  }
}

function mod(a: number, b: number): number {
  return ((a % b) + b) % b;
}

/**
 * The accumulator-based core every window function compiles to. `merge` is needed for session windows.
 *
 * Accumulators may be immutable (`add` returns a new one) or, opt-in, updated in place: `add` (and `merge`) may
 * modify the accumulator they are given and return that same object, which saves an allocation per record (as in
 * Flink's AggregateFunction). The runtime owns an accumulator from `createAccumulator` until its window is purged
 * and hands it to nothing but these functions and the state backend (which stores a serialised copy at flush). One
 * rule for in-place accumulators: a window with allowed lateness can fire again after a late record, so `getResult`
 * must then return a value that shares nothing mutable with the accumulator (a result already handed to a sink
 * would otherwise change under it); with `allowedLatenessMs` 0 a window fires once and is dropped, so returning
 * the accumulator itself is safe.
 */
export interface AggregateFunction<I, A, R> {
  createAccumulator(): A;
  /** Returns the updated accumulator: a new one, or `accumulator` itself modified in place. */
  add(value: I, accumulator: A): A;
  getResult(accumulator: A): R;
  /** Session windows: the union of two windows' accumulators (may modify and return `a`). */
  merge?(a: A, b: A): A;
}

export interface WindowResult<K, R> {
  readonly key: K;
  readonly start: number;
  readonly end: number;
  readonly result: R;
}

/** The normalised form the window operator runs; build it with aggregate(), reduce() or processWindow(). */
export interface WindowFunctionSpec<K extends KeyValue, I, O> {
  readonly createAccumulator: () => unknown;
  readonly add: (value: I, accumulator: unknown) => unknown;
  readonly merge?: (a: unknown, b: unknown) => unknown;
  readonly emit: (key: K, window: TimeWindow, accumulator: unknown) => O[];
  /** Optional: the one result of a function that always emits exactly one (saves the array per firing). */
  readonly emitSingle?: (key: K, window: TimeWindow, accumulator: unknown) => O;
}

export function aggregate<K extends KeyValue, I, A, R, O = WindowResult<K, R>>(
  fn: AggregateFunction<I, A, R>,
  finish?: (key: K, window: TimeWindow, result: R) => O,
): WindowFunctionSpec<K, I, O> {
  const shape = finish ?? ((key: K, w: TimeWindow, result: R) => ({ key, start: w.start, end: w.end, result }) as O);
  return {
    createAccumulator: () => fn.createAccumulator(),
    add: (value, acc) => fn.add(value, acc as A),
    merge: fn.merge ? (a, b) => fn.merge!(a as A, b as A) : undefined,
    emit: (key, w, acc) => [shape(key, w, fn.getResult(acc as A))],
    emitSingle: (key, w, acc) => shape(key, w, fn.getResult(acc as A)),
  };
}

export function reduce<K extends KeyValue, I>(fn: (a: I, b: I) => I): WindowFunctionSpec<K, I, WindowResult<K, I>> {
  const none = { empty: true };
  return {
    createAccumulator: () => none,
    add: (value, acc) => (acc === none || isEmpty(acc) ? { v: value } : { v: fn((acc as { v: I }).v, value) }),
    merge: (a, b) => (isEmpty(a) ? b : isEmpty(b) ? a : { v: fn((a as { v: I }).v, (b as { v: I }).v) }),
    emit: (key, w, acc) => (isEmpty(acc) ? [] : [{ key, start: w.start, end: w.end, result: (acc as { v: I }).v }]),
  };
}

function isEmpty(acc: unknown): boolean {
  return (acc as { empty?: boolean }).empty === true;
}

/**
 * Keeps every element of the window and hands them to `fn` when the window fires (memory grows with the window).
 * Elements are appended in place (the runtime owns the accumulator); `fn` gets a copy, which it may keep.
 */
export function processWindow<K extends KeyValue, I, O>(
  fn: (key: K, window: TimeWindow, elements: readonly I[]) => O[],
): WindowFunctionSpec<K, I, O> {
  return {
    createAccumulator: () => [],
    add: (value, acc) => {
      (acc as I[]).push(value);
      return acc;
    },
    merge: (a, b) => [...(a as I[]), ...(b as I[])],
    emit: (key, w, acc) => fn(key, w, (acc as I[]).slice()),
  };
}

export interface WindowOptions<I> {
  /** How long after the watermark passes a window's end late records still update (and re-fire) it. */
  readonly allowedLatenessMs?: number;
  /** Records later than the allowed lateness go here instead of being dropped silently. */
  readonly lateOutputTag?: OutputTag<I>;
  /**
   * Lets the partitioner split a hot key of this window over several subtasks (two-phase aggregation): each subtask
   * a key's records reach keeps a partial window, and the partials are merged per key and window in a second
   * operator, `${id}-merge` (reached through `${id}-by-key`), which emits the results. Results are the same as
   * without splitting, whatever is split or folded back when. Needs the function's `merge` (aggregate() with
   * merge, reduce(), processWindow()); tumbling or sliding windows; no allowed lateness (a partial is merged once);
   * accumulators that survive serialisation (they cross the exchange between the two operators).
   */
  readonly splittable?: boolean;
}

/** What the first phase of a splittable window hands the second: one key's partial accumulator of one window. */
export interface WindowPartial {
  readonly key: KeyValue;
  readonly start: number;
  readonly end: number;
  readonly accumulator: unknown;
}

/** The first phase: the user's windows over wherever the key's records land, emitting partials instead of results. */
export function partialWindows<K extends KeyValue, I>(fn: WindowFunctionSpec<K, I, unknown>): WindowFunctionSpec<K, I, WindowPartial> {
  const partial = (key: K, w: TimeWindow, accumulator: unknown): WindowPartial => ({ key, start: w.start, end: w.end, accumulator });
  return {
    createAccumulator: fn.createAccumulator,
    add: fn.add,
    merge: fn.merge,
    emit: (key, w, acc) => [partial(key, w, acc)],
    emitSingle: partial,
  };
}

/** The second phase: a key's partials of one window merged into one accumulator, then the user's results. */
export function mergedWindows<K extends KeyValue, O>(fn: WindowFunctionSpec<K, never, O>): WindowFunctionSpec<K, WindowPartial, O> {
  const merge = fn.merge!;
  return {
    createAccumulator: fn.createAccumulator,
    add: (partial, acc) => merge(acc, partial.accumulator),
    merge,
    emit: fn.emit,
    emitSingle: fn.emitSingle,
  };
}

/**
 * What a keyed subtask's loop (subtask.ts) requires of the operator at its root: the runtime contract, in the spirit
 * of Flink's StreamOperator and Arroyo's operator trait. KeyedOperator (keyed-operator.ts) is the one implementation,
 * built from parts; what makes it a process, broadcast-process or window operator is its logic (keyed-logic.ts).
 *
 * Threading and order: every call comes from the subtask's own loop, one at a time, awaited before the next; none
 * overlaps another. Calls that read or replace state (snapshots, release, adopt) run in-band, between two input
 * messages, so they see exactly the records handed before them; `persistState` runs first, so state the operator holds
 * in memory (open windows) has reached the backend. The backend, the clock and the outputs are the operator's through
 * its environment (KeyedOperatorEnv); it does no I/O of its own beyond awaiting the backend in batches.
 *
 * Lifecycle: open → (processBatch | advanceWatermark | advanceProcessingTime | in-band calls)* → the subtask ends
 * (end of input) or is stopped. An operator never outlives its subtask; the backend is closed by the job.
 */
import type { KeyedRecord, StreamRecord } from '../records';

export interface KeyedStreamOperator {
  /** Before the first record: loads timers and windows of the key groups it owns (skipped when the backend is empty). */
  open(): Promise<void>;
  /**
   * One batch of records of the key groups it owns: the state of every key in it is prefetched with one batched read,
   * user code runs synchronously per record, outputs are handed on. `positions`: per source partition, where the input
   * stood after this batch (kept as the furthest per partition; broadcast handlers read it as `inputPosition()`).
   */
  processBatch(records: readonly KeyedRecord[], positions?: Readonly<Record<string, string>>): Promise<void>;
  /** Broadcast elements, in arrival order (an operator with a broadcast input; others throw). */
  processBroadcast(records: readonly StreamRecord[]): void;
  /** Event time reached `watermark` (min over its input channels): due event-time timers and windows fire. */
  advanceWatermark(watermark: number): Promise<void>;
  /** Processing time reached `now`: due processing-time timers fire. */
  advanceProcessingTime(now: number): Promise<void>;
  /** The earliest pending processing-time timer, so the loop knows how long it may wait for input. */
  nextProcessingTimer(): number | undefined;
  /** Writes what it holds only in memory to the backend (runs before every in-band call). */
  persistState(): Promise<void>;
  /** Its part of a checkpoint: one self-contained image per owned key group, timers included. */
  snapshotOwnedKeyGroups(): Promise<Map<number, Uint8Array>>;
  /** State outside keyed state (broadcast state), or undefined. */
  snapshotOperatorState(): unknown;
  restoreOperatorState(state: unknown): void;
  /** A live move out: the key group's image (timers included); its state is dropped here. */
  releaseKeyGroup(keyGroup: number): Promise<Uint8Array>;
  /** A live move in: restores the image and re-arms its timers; the key group is owned from here on. */
  adoptKeyGroup(keyGroup: number, image: Uint8Array): Promise<void>;
  /** A live rescale changed its stage's subtask count: user code reads it from its OperatorInfo from now on. */
  resize(parallelism: number): void;
}

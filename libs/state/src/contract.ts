/**
 * The contract between the stream engine and keyed state. The engine owns this file's shape; libs/state
 * implements it. Keep it narrow: everything else in libs/state is internal.
 *
 * Why this shape: one awaited native read costs ~100 µs, so user code never awaits state. Before a batch runs the
 * engine calls `prefetch` once with every key the batch touches; user code then reads and writes synchronously
 * against a write-back cache, and `flush` writes dirty entries to the store in one batch.
 */

/** A key group: the unit of routing, state and movement. 0 ≤ keyGroup < maxParallelism (≤ 32768). */
export type KeyGroup = number;

/** Names one piece of keyed state: `${operatorId}/${stateName}`. Stable across bundle versions. */
export type StateNamespace = string;

/** Addresses one value: which key group, which state, which key (the record key, already serialised). */
export interface StateRef {
  readonly keyGroup: KeyGroup;
  readonly namespace: StateNamespace;
  readonly key: Uint8Array;
}

export interface PutOptions {
  /** Absolute expiry (epoch ms, processing time); a read at or after it sees nothing. */
  readonly expiresAt?: number;
}

export interface KeyedStateBackend {
  /** Loads every ref not already cached, in one batched read. The only awaited read on the hot path. */
  prefetch(refs: readonly StateRef[]): Promise<void>;
  /**
   * Synchronous read from the cache. A ref that was neither prefetched nor written reads as a miss only when
   * the backend knows it is absent; otherwise it throws `StateNotLoadedError` (an engine bug, never user error).
   * Returns the cached object itself: treat it as immutable unless it is put back.
   */
  get<T>(ref: StateRef, now: number): T | undefined;
  /** Needs no prefetch. Putting `undefined` deletes. */
  put<T>(ref: StateRef, value: T, options?: PutOptions): void;
  delete(ref: StateRef): void;
  /** Writes all dirty entries to the store in one batch. The engine calls it after batches and before snapshots. */
  flush(): Promise<void>;

  /**
   * Every live (unexpired) entry of one namespace in one key group, in key order, for timers, window firing and
   * migration. Flushes first; writes made during the iteration show in the next call.
   */
  entries<T>(keyGroup: KeyGroup, namespace: StateNamespace, now: number): AsyncIterable<[Uint8Array, T]>;

  /** A self-contained, versioned byte image of one key group's state (all namespaces); flushes first. */
  snapshotKeyGroup(keyGroup: KeyGroup): Promise<Uint8Array>;
  /** Replaces one key group's state with a snapshot image (any backend's image restores into any backend). */
  restoreKeyGroup(keyGroup: KeyGroup, image: Uint8Array): Promise<void>;
  /** Removes one key group's state (after it has moved elsewhere). */
  dropKeyGroup(keyGroup: KeyGroup): Promise<void>;

  /**
   * Optional: a checkpoint's images of the key groups the subtask owns, after a flush. Backends with a changelog
   * return, for a key group that had a full image in an earlier checkpoint, only its changes since the previous
   * checkpoint (a "WKGC" changes image; omitted when nothing changed), and full images for the others: whoever
   * stores checkpoints keeps each key group's chain and composes it back into a full image on restore
   * (composeKeyGroupImage). Without it, the engine snapshots each owned key group (full images).
   */
  checkpointKeyGroups?(keyGroups: readonly KeyGroup[]): Promise<Map<KeyGroup, Uint8Array>>;

  /**
   * Optional: true when the backend holds no state at all (a fresh job's). One read of the store: the engine then
   * skips loading timers and windows key group by key group (128 scans of nothing cost a job ~25 ms to start).
   */
  isEmpty?(): Promise<boolean>;

  close(): Promise<void>;
}

export class StateNotLoadedError extends Error {
  override readonly name = 'StateNotLoadedError';
}

export interface StateBackendOptions {
  /** Directory of the LSM store; one directory per subtask. Ignored by the in-memory backend. */
  readonly path?: string;
  /** How many entries the write-back cache keeps before it evicts clean ones (LRU). */
  readonly cacheEntries?: number;
}

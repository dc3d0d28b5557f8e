import type { KeyedStateBackend, KeyGroup } from '../contract';

/** One file of a local checkpoint. `name` is the file's name inside the checkpoint; `path` where it is now. */
export interface LocalCheckpointFile {
  readonly name: string;
  readonly path: string;
  readonly size: number;
}

/**
 * A backend's state at one instant, as files in a local directory: for the LSM backend, RocksDB's immutable SST
 * files (hard links) plus copies of its small mutable files (CURRENT, MANIFEST-*, OPTIONS-*); for the memory
 * backend, one image file of every key group. The files are the caller's: upload them, then delete `dir`.
 */
export interface LocalCheckpoint {
  readonly kind: StateBackendKind;
  readonly dir: string;
  readonly files: readonly LocalCheckpointFile[];
  /**
   * LSM only: true when linking the live files kept racing compactions and the checkpoint paused background work
   * instead (it then waited for a running compaction). Worth a metric: it is what makes a checkpoint's local part slow.
   */
  readonly pausedBackgroundWork?: boolean;
}

export type StateBackendKind = 'memory' | 'lsm';

/** An inclusive range of key groups: `start..end`. Key groups of one subtask are contiguous by default. */
export interface KeyGroupRange {
  readonly start: KeyGroup;
  readonly end: KeyGroup;
}

/** A keyed state backend that can also write its whole state as a local checkpoint (both built-in backends can). */
export interface CheckpointableStateBackend extends KeyedStateBackend {
  readonly kind: StateBackendKind;
  /**
   * Flushes the write-back cache and writes a consistent copy of every key group into `dir` (created; it must not
   * exist or be empty). Prefetches and flushes issued meanwhile wait (~tens of ms for RocksDB: no data is copied,
   * SSTs are hard-linked). The caller owns the files: upload them, then remove `dir`.
   */
  checkpoint(dir: string): Promise<LocalCheckpoint>;
  checkpointKeyGroups(keyGroups: readonly KeyGroup[]): Promise<Map<KeyGroup, Uint8Array>>;
  /** The next checkpointKeyGroups takes full images only (a checkpoint's changes were lost before they were stored). */
  requestFullCheckpoint(): void;
}

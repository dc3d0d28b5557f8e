import type { LocalCheckpointFile } from '../checkpoint/local-checkpoint';
import type { KeyRange } from '../keys/key-layout';

/**
 * The raw ordered key-value store under the keyed state backend (internal to libs/state). Keys order bytewise.
 * Every call is batched: the backend never issues one awaited call per record.
 */
export interface OrderedStore {
  /** Values in the order of `keys`; `undefined` where a key is absent. One round trip to the store. */
  getMany(keys: readonly Buffer[]): Promise<(Buffer | undefined)[]>;
  /** Applies every write atomically, in order. */
  writeBatch(writes: readonly StoreWrite[]): Promise<void>;
  /** Entries of `range` in key order, in chunks (one await per chunk, not per entry). */
  scan(range: KeyRange): AsyncIterable<readonly StoreEntry[]>;
  /** Removes every key of `range`; keys outside it are untouched. */
  deleteRange(range: KeyRange): Promise<void>;
  /**
   * Writes a consistent copy of the whole store as files into the existing, empty directory `dir` (stores that can
   * be checkpointed: memory and RocksDB). Writes issued meanwhile wait; the backend calls it with its queue held.
   */
  checkpoint?(dir: string): Promise<StoreCheckpoint>;
  /**
   * A consistent view of the store as of this call, which later writes do not change (RocksDB snapshots): scans of
   * it can run while the store keeps being written. Release it when done.
   */
  snapshot?(): StoreSnapshot;
  close(): Promise<void>;
}

export interface StoreSnapshot {
  scan(range: KeyRange): AsyncIterable<readonly StoreEntry[]>;
  release(): Promise<void>;
}

export interface StoreCheckpoint {
  readonly files: LocalCheckpointFile[];
  /** The store had to pause its background work to take it (RocksDB's fallback path). */
  readonly pausedBackgroundWork: boolean;
}

/** Every store key: key groups are ≤ 0x7fff, so every key starts with a byte < 0x80. */
export const WHOLE_STORE: KeyRange = { gte: Buffer.alloc(0), lt: Buffer.from([0x80]) };

export type StoreWrite =
  | { readonly kind: 'put'; readonly key: Buffer; readonly value: Buffer }
  | { readonly kind: 'delete'; readonly key: Buffer };

export interface StoreEntry {
  readonly key: Buffer;
  readonly value: Buffer;
}

/** How many entries a scan hands over per chunk. */
export const SCAN_CHUNK_ENTRIES = 1024;

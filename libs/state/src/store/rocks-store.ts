import RocksDB from 'rocksdb-native';
import { emptyDir, linkLiveRocksFiles, linkRocksFiles } from '../checkpoint/rocks-files';
import type { KeyRange } from '../keys/key-layout';
import { ReadableDrain } from './readable-drain';
import {
  SCAN_CHUNK_ENTRIES,
  type OrderedStore,
  type StoreCheckpoint,
  type StoreEntry,
  type StoreSnapshot,
  type StoreWrite,
} from './ordered-store';

/** Tries at linking the live files while compactions run, before falling back to suspending them. */
const LIVE_LINK_ATTEMPTS = 3;

/**
 * RocksDB (rocksdb-native) behind the ordered store interface: the LSM store of the keyed state backend.
 * Reads and writes go through rocksdb-native's native batches (one thread-pool round trip per call), and
 * deleteRange writes one range tombstone, so dropping a key group costs O(1) however much state it holds.
 */
export class RocksStore implements OrderedStore {
  private constructor(
    private readonly db: RocksDB,
    private readonly path: string,
  ) {}

  static async open(path: string): Promise<RocksStore> {
    // Two background jobs: workers share two cores with the engine's own thread.
    const db = new RocksDB(path, { maxBackgroundJobs: 2 });
    await db.ready();
    return new RocksStore(db, path);
  }

  /**
   * RocksDB has no checkpoint call in rocksdb-native, so this is its Checkpoint::CreateCheckpoint by hand: flush the
   * memtable into an SST, then hard-link the live SSTs the MANIFEST names and copy the MANIFEST (cut at its last
   * complete record), CURRENT and OPTIONS, while compactions go on; the hard links keep the SSTs alive after a
   * compaction deletes them. If a compaction removes a live file before it is linked, it tries again; if that keeps
   * happening or the MANIFEST is not understood, it suspends (PauseBackgroundWork: waits for a running compaction,
   * then no flush, compaction or file deletion) and links every SST in the directory.
   */
  async checkpoint(dir: string): Promise<StoreCheckpoint> {
    await this.db.flush();
    for (let attempt = 0; attempt < LIVE_LINK_ATTEMPTS; attempt++) {
      const files = await linkLiveRocksFiles(this.path, dir);
      if (files !== null) return { files, pausedBackgroundWork: false };
    }
    await this.db.suspend();
    try {
      await emptyDir(dir);
      return { files: await linkRocksFiles(this.path, dir), pausedBackgroundWork: true };
    } finally {
      await this.db.resume();
    }
  }

  async getMany(keys: readonly Buffer[]): Promise<(Buffer | undefined)[]> {
    if (keys.length === 0) return [];
    const batch = this.db.read({ capacity: keys.length, autoDestroy: true });
    const pending = keys.map((key) => batch.get(key));
    await batch.flush();
    const values = await Promise.all(pending);
    return values.map((value) => value ?? undefined);
  }

  async writeBatch(writes: readonly StoreWrite[]): Promise<void> {
    if (writes.length === 0) return;
    const batch = this.db.write({ capacity: writes.length, autoDestroy: true });
    for (const write of writes) {
      if (write.kind === 'put') batch.tryPut(write.key, write.value);
      else batch.tryDelete(write.key);
    }
    await batch.flush();
  }

  scan(range: KeyRange): AsyncIterable<readonly StoreEntry[]> {
    return scanChunks(this.db, range);
  }

  snapshot(): StoreSnapshot {
    const session = this.db.snapshot();
    return { scan: (range) => scanChunks(session, range), release: () => session.close() };
  }

  async deleteRange(range: KeyRange): Promise<void> {
    const batch = this.db.write({ capacity: 1, autoDestroy: true });
    batch.tryDeleteRange(range.gte, range.lt);
    await batch.flush();
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

/**
 * rocksdb-native's iterator is a streamx Readable filled `capacity` entries per native read; iterating it with
 * `for await` costs a promise and a microtask per entry, which dominated image building (a checkpoint's scan of
 * every key group). This drains its buffer synchronously with read() and waits only when the buffer is empty.
 */
async function* scanChunks(db: RocksDB, range: KeyRange): AsyncIterable<readonly StoreEntry[]> {
  const iterator = db.iterator({ gte: range.gte, lt: range.lt }, { capacity: SCAN_CHUNK_ENTRIES });
  const drain = new ReadableDrain<StoreEntry>(iterator);
  try {
    for (;;) {
      const chunk = drain.take(SCAN_CHUNK_ENTRIES);
      if (chunk.length > 0) yield chunk;
      else if (drain.done) return;
      else await drain.wait();
    }
  } finally {
    iterator.destroy();
  }
}

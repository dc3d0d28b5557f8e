import RocksDB from 'rocksdb-native';
import type { LocalCheckpointFile } from '../checkpoint/local-checkpoint';
import { linkRocksFiles } from '../checkpoint/rocks-files';
import type { KeyRange } from '../keys/key-layout';
import { SCAN_CHUNK_ENTRIES, type OrderedStore, type StoreEntry, type StoreWrite } from './ordered-store';

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
   * memtable into an SST, suspend (background flushes, compactions and file deletions pause; new reads and writes
   * queue in JS), hard-link the SSTs and copy CURRENT/MANIFEST/OPTIONS, resume. The hard links keep the SSTs alive
   * after compaction deletes them from the live directory.
   */
  async checkpoint(dir: string): Promise<LocalCheckpointFile[]> {
    await this.db.flush();
    await this.db.suspend();
    try {
      return await linkRocksFiles(this.path, dir);
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

  async *scan(range: KeyRange): AsyncIterable<readonly StoreEntry[]> {
    let chunk: StoreEntry[] = [];
    for await (const entry of this.db.iterator({ gte: range.gte, lt: range.lt }, { capacity: SCAN_CHUNK_ENTRIES })) {
      chunk.push(entry);
      if (chunk.length === SCAN_CHUNK_ENTRIES) {
        yield chunk;
        chunk = [];
      }
    }
    if (chunk.length > 0) yield chunk;
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

import { ClassicLevel } from 'classic-level';
import type { KeyRange } from '../keys/key-layout';
import { SCAN_CHUNK_ENTRIES, type OrderedStore, type StoreEntry, type StoreWrite } from './ordered-store';

/** Bytes an iterator may buffer per read; chunks of ~1k small entries fit well below it. */
const SCAN_BUFFER_BYTES = 1024 * 1024;

/**
 * LevelDB (classic-level) behind the ordered store interface. Measured against RocksDB in docs/state.md; the
 * keyed state backend uses RocksDB, this one stays as the comparison point of `npm run bench -- state stores`.
 */
export class LevelStore implements OrderedStore {
  private constructor(private readonly db: ClassicLevel<Buffer, Buffer>) {}

  static async open(path: string): Promise<LevelStore> {
    const db = new ClassicLevel<Buffer, Buffer>(path, {
      keyEncoding: 'buffer',
      valueEncoding: 'buffer',
      // Larger memtable than the 4 MiB default: fewer level-0 files under the bursty batched writes of flush().
      writeBufferSize: 32 * 1024 * 1024,
    });
    await db.open();
    return new LevelStore(db);
  }

  getMany(keys: readonly Buffer[]): Promise<(Buffer | undefined)[]> {
    return this.db.getMany(keys as Buffer[]);
  }

  writeBatch(writes: readonly StoreWrite[]): Promise<void> {
    if (writes.length === 0) return Promise.resolve();
    return this.db.batch(
      writes.map((write) =>
        write.kind === 'put'
          ? { type: 'put' as const, key: write.key, value: write.value }
          : { type: 'del' as const, key: write.key },
      ),
    );
  }

  async *scan(range: KeyRange): AsyncIterable<readonly StoreEntry[]> {
    const iterator = this.db.iterator({ gte: range.gte, lt: range.lt, highWaterMarkBytes: SCAN_BUFFER_BYTES });
    try {
      while (true) {
        const pairs = await iterator.nextv(SCAN_CHUNK_ENTRIES);
        if (pairs.length === 0) return;
        yield pairs.map(([key, value]) => ({ key, value }));
      }
    } finally {
      await iterator.close();
    }
  }

  /** LevelDB has no range tombstones: this iterates the range and deletes key by key (in native batches). */
  deleteRange(range: KeyRange): Promise<void> {
    return this.db.clear({ gte: range.gte, lt: range.lt });
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

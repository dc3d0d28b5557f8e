import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { STORE_IMAGE_FILE, writeStoreImage } from '../checkpoint/store-image';
import { StateBackendClosedError } from '../errors';
import type { KeyRange } from '../keys/key-layout';
import { SCAN_CHUNK_ENTRIES, WHOLE_STORE, type OrderedStore, type StoreCheckpoint, type StoreEntry, type StoreWrite } from './ordered-store';

/**
 * In-memory ordered store. Point reads and writes go to a hash map keyed by the key's latin1 string (which orders
 * exactly like the bytes); a sorted key index serves range scans. New keys are appended to an unsorted tail and
 * merged into the index on the next range operation, so a burst of inserts costs O(n + k log k) once instead of
 * O(n) per insert. Deleted keys stay in the index until the next merge, and scans skip keys the map no longer holds.
 */
export class MemoryStore implements OrderedStore {
  private readonly values = new Map<string, Buffer>();
  private sortedKeys: string[] = [];
  private pendingKeys: string[] = [];
  private staleInIndex = 0;
  private closed = false;

  async getMany(keys: readonly Buffer[]): Promise<(Buffer | undefined)[]> {
    this.checkOpen();
    return keys.map((key) => this.values.get(key.toString('latin1')));
  }

  async writeBatch(writes: readonly StoreWrite[]): Promise<void> {
    this.checkOpen();
    for (const write of writes) {
      const id = write.key.toString('latin1');
      if (write.kind === 'put') {
        // Copy: the caller may reuse its buffer, and a store must not alias its callers' memory.
        if (!this.values.has(id)) this.pendingKeys.push(id);
        this.values.set(id, Buffer.from(write.value));
      } else if (this.values.delete(id)) {
        this.staleInIndex++;
      }
    }
  }

  async *scan(range: KeyRange): AsyncIterable<readonly StoreEntry[]> {
    this.checkOpen();
    this.mergeIndex();
    const index = this.sortedKeys;
    const end = range.lt.toString('latin1');
    let chunk: StoreEntry[] = [];
    for (let i = lowerBound(index, range.gte.toString('latin1')); i < index.length && index[i] < end; i++) {
      const value = this.values.get(index[i]);
      if (value === undefined) continue;
      chunk.push({ key: Buffer.from(index[i], 'latin1'), value });
      if (chunk.length === SCAN_CHUNK_ENTRIES) {
        yield chunk;
        chunk = [];
      }
    }
    if (chunk.length > 0) yield chunk;
  }

  async deleteRange(range: KeyRange): Promise<void> {
    this.checkOpen();
    this.mergeIndex();
    const from = lowerBound(this.sortedKeys, range.gte.toString('latin1'));
    const to = lowerBound(this.sortedKeys, range.lt.toString('latin1'));
    for (let i = from; i < to; i++) this.values.delete(this.sortedKeys[i]);
    // A new array rather than splice: a scan in progress keeps iterating the index it started with.
    this.sortedKeys = this.sortedKeys.slice(0, from).concat(this.sortedKeys.slice(to));
  }

  /** One image file of every key group (the memory backend is for small state: the image is built in memory). */
  async checkpoint(dir: string): Promise<StoreCheckpoint> {
    const entries: StoreEntry[] = [];
    for await (const chunk of this.scan(WHOLE_STORE)) for (const entry of chunk) entries.push(entry);
    const image = writeStoreImage(entries);
    const path = join(dir, STORE_IMAGE_FILE);
    await writeFile(path, image);
    return { files: [{ name: STORE_IMAGE_FILE, path, size: image.length }], pausedBackgroundWork: false };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.values.clear();
    this.sortedKeys = [];
    this.pendingKeys = [];
  }

  /** Folds the unsorted tail into the sorted index and forgets deleted keys. */
  private mergeIndex(): void {
    if (this.pendingKeys.length === 0 && this.staleInIndex === 0) return;
    const pending = this.pendingKeys.filter((id) => this.values.has(id)).sort();
    const merged: string[] = [];
    let i = 0;
    let j = 0;
    const live = (id: string): boolean => this.values.has(id);
    while (i < this.sortedKeys.length || j < pending.length) {
      const next =
        j >= pending.length || (i < this.sortedKeys.length && this.sortedKeys[i] < pending[j])
          ? this.sortedKeys[i++]
          : pending[j++];
      // A key deleted and re-put while pending can sit in both lists; keep one copy.
      if (live(next) && merged[merged.length - 1] !== next) merged.push(next);
    }
    this.sortedKeys = merged;
    this.pendingKeys = [];
    this.staleInIndex = 0;
  }

  private checkOpen(): void {
    if (this.closed) throw new StateBackendClosedError('memory store is closed');
  }
}

/** First index whose key is ≥ `target`. */
function lowerBound(sorted: readonly string[], target: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

import { keyGroupOfId } from '../keys/key-layout';
import { decodeValue, readExpiresAt } from '../values/value-codec';
import type { KeyGroup } from '../contract';

/**
 * One cached state value. `present: false` means known absent (never stored, or deleted): a read returns
 * undefined without touching the store. Values loaded from the store stay as raw bytes until first read.
 */
export interface CacheEntry {
  readonly id: string;
  present: boolean;
  /** The decoded value; meaningful when present and `raw` is undefined. */
  value: unknown;
  /** The stored envelope, not yet decoded. */
  raw: Buffer | undefined;
  expiresAt: number | undefined;
  dirty: boolean;
  /** Bumped by every write, so a flush knows whether the entry changed while its write was in flight. */
  version: number;
  /** The batch that last touched the entry: eviction never removes entries of the current batch. */
  epoch: number;
}

/** A dirty entry as it was when a flush took it. */
export interface FlushItem {
  readonly entry: CacheEntry;
  readonly version: number;
}

/**
 * The write-back cache of the keyed state backend. Dirty entries live in their own map and are never evicted;
 * clean entries live in a Map kept in least-recently-used order (a touch re-inserts at the end), and beyond
 * `capacity` total entries the oldest clean ones are evicted, except those touched in the current batch, so a
 * batch larger than the cache still finds everything it prefetched.
 */
export class WriteBackCache {
  private readonly clean = new Map<string, CacheEntry>();
  private readonly dirty = new Map<string, CacheEntry>();
  private epoch = 0;

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.clean.size + this.dirty.size;
  }

  get dirtyCount(): number {
    return this.dirty.size;
  }

  /** Starts a new batch: entries touched from now on are pinned until the next batch starts. */
  beginBatch(): void {
    this.epoch++;
  }

  /** The entry for `id`, marked as used by the current batch; undefined when not cached. */
  lookup(id: string): CacheEntry | undefined {
    const dirty = this.dirty.get(id);
    if (dirty !== undefined) return dirty;
    const entry = this.clean.get(id);
    if (entry !== undefined && entry.epoch !== this.epoch) {
      entry.epoch = this.epoch;
      this.clean.delete(id);
      this.clean.set(id, entry);
    }
    return entry;
  }

  /** The live value of a present entry, decoding it on first use. */
  valueOf<T>(entry: CacheEntry): T {
    if (entry.raw !== undefined) {
      entry.value = decodeValue<T>(entry.raw).value;
      entry.raw = undefined;
    }
    return entry.value as T;
  }

  /** Caches what the store returned for `id` (undefined: absent), unless a write got there first. */
  load(id: string, stored: Buffer | undefined): void {
    if (this.dirty.has(id) || this.clean.has(id)) return;
    this.clean.set(id, {
      id,
      present: stored !== undefined,
      value: undefined,
      raw: stored,
      expiresAt: stored === undefined ? undefined : readExpiresAt(stored),
      dirty: false,
      version: 0,
      epoch: this.epoch,
    });
  }

  /** Records a put (present) or a delete (absent) to be written by the next flush. */
  write(id: string, present: boolean, value: unknown, expiresAt: number | undefined): void {
    let entry = this.dirty.get(id);
    if (entry === undefined) {
      entry = this.clean.get(id);
      if (entry === undefined) {
        entry = { id, present, value, raw: undefined, expiresAt, dirty: true, version: 0, epoch: this.epoch };
      } else {
        this.clean.delete(id);
      }
      this.dirty.set(id, entry);
    }
    entry.present = present;
    entry.value = present ? value : undefined;
    entry.raw = undefined;
    entry.expiresAt = present ? expiresAt : undefined;
    entry.dirty = true;
    entry.version++;
    entry.epoch = this.epoch;
  }

  /** Every dirty entry with its current version; the entries stay dirty (and readable) until `markFlushed`. */
  takeDirty(): FlushItem[] {
    const items: FlushItem[] = [];
    for (const entry of this.dirty.values()) items.push({ entry, version: entry.version });
    return items;
  }

  /** After a successful write: entries not written again meanwhile become clean (deleted ones known-absent). */
  markFlushed(items: readonly FlushItem[], writtenAsDelete: ReadonlySet<CacheEntry>): void {
    for (const { entry, version } of items) {
      if (entry.version !== version || this.dirty.get(entry.id) !== entry) continue;
      if (writtenAsDelete.has(entry)) {
        entry.present = false;
        entry.value = undefined;
        entry.expiresAt = undefined;
      }
      entry.dirty = false;
      this.dirty.delete(entry.id);
      this.clean.set(entry.id, entry);
    }
  }

  isDirty(id: string): boolean {
    return this.dirty.has(id);
  }

  /** A clean entry whose value the backend just deleted from the store becomes known-absent. */
  markAbsent(id: string): void {
    const entry = this.clean.get(id);
    if (entry === undefined) return;
    entry.present = false;
    entry.value = undefined;
    entry.raw = undefined;
    entry.expiresAt = undefined;
  }

  /** Drops every entry of one key group, dirty ones included (restore and drop replace the key group). */
  dropKeyGroup(keyGroup: KeyGroup): void {
    for (const map of [this.clean, this.dirty]) {
      for (const id of map.keys()) if (keyGroupOfId(id) === keyGroup) map.delete(id);
    }
  }

  /** Evicts least recently used clean entries until the cache fits, stopping at the current batch's entries. */
  evict(): void {
    let excess = this.size - this.capacity;
    if (excess <= 0) return;
    for (const [id, entry] of this.clean) {
      if (excess <= 0 || entry.epoch === this.epoch) return;
      this.clean.delete(id);
      excess--;
    }
  }

  clear(): void {
    this.clean.clear();
    this.dirty.clear();
  }
}

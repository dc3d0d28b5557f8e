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
  /** The batch as of which the entry took its place in the cache's order (see WriteBackCache). */
  placed: number;
}

/** A dirty entry as it was when a flush took it. */
export interface FlushItem {
  readonly entry: CacheEntry;
  readonly version: number;
}

/**
 * The write-back cache of the keyed state backend: one Map in approximately least-recently-used order, plus the
 * list of dirty entries for the next flush. A touch only stamps the entry with the current batch; the entry is
 * moved to the end of the order lazily, when eviction meets it (a second chance, as in the CLOCK algorithm). A
 * re-insertion per touched entry and batch (a delete and a set on a Map of up to a million entries) was the
 * largest cost of a state read. Beyond `capacity` entries, eviction walks from the oldest place: an entry used
 * since it was placed moves to the end, the others that are clean go. Dirty entries are never evicted, nor are
 * entries touched in the current batch (from its prefetch to the next prefetch or flush), so a batch larger than the
 * cache still finds everything it prefetched.
 */
export class WriteBackCache {
  private readonly entries = new Map<string, CacheEntry>();
  private dirtyEntries: CacheEntry[] = [];
  private epoch = 0;

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  get dirtyCount(): number {
    return this.dirtyEntries.length;
  }

  /** Starts a new batch: entries touched from now on are pinned until the next batch starts. */
  beginBatch(): void {
    this.epoch++;
  }

  /** The entry for `id`, marked as used by the current batch; undefined when not cached. */
  lookup(id: string): CacheEntry | undefined {
    const entry = this.entries.get(id);
    if (entry !== undefined) entry.epoch = this.epoch;
    return entry;
  }

  isDirty(id: string): boolean {
    return this.entries.get(id)?.dirty === true;
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
    if (this.entries.has(id)) return;
    this.entries.set(id, {
      id,
      present: stored !== undefined,
      value: undefined,
      raw: stored,
      expiresAt: stored === undefined ? undefined : readExpiresAt(stored),
      dirty: false,
      version: 0,
      epoch: this.epoch,
      placed: this.epoch,
    });
  }

  /** Records a put (present) or a delete (absent) to be written by the next flush. */
  write(id: string, present: boolean, value: unknown, expiresAt: number | undefined): void {
    let entry = this.entries.get(id);
    if (entry === undefined) {
      entry = { id, present, value, raw: undefined, expiresAt, dirty: false, version: 0, epoch: this.epoch, placed: this.epoch };
      this.entries.set(id, entry);
    } else {
      entry.epoch = this.epoch;
    }
    entry.present = present;
    entry.value = present ? value : undefined;
    entry.raw = undefined;
    entry.expiresAt = present ? expiresAt : undefined;
    entry.version++;
    if (!entry.dirty) {
      entry.dirty = true;
      this.dirtyEntries.push(entry);
    }
  }

  /** Every dirty entry with its current version; the entries stay dirty (and readable) until `markFlushed`. */
  takeDirty(): FlushItem[] {
    return this.dirtyEntries.map((entry) => ({ entry, version: entry.version }));
  }

  /** After a successful write: entries not written again meanwhile become clean (deleted ones known-absent). */
  markFlushed(items: readonly FlushItem[], writtenAsDelete: ReadonlySet<CacheEntry>): void {
    for (const { entry, version } of items) {
      if (entry.version !== version || !entry.dirty) continue;
      if (writtenAsDelete.has(entry)) {
        entry.present = false;
        entry.value = undefined;
        entry.expiresAt = undefined;
      }
      entry.dirty = false;
    }
    // Entries written again during the flush, or first written during it, stay for the next one.
    this.dirtyEntries = this.dirtyEntries.filter((entry) => entry.dirty);
    // A flush ends the current batch's pin: the engine flushes only between batches (after a batch's reads), and
    // entries written without any prefetch (a window operator persisting its windows, a writer that never
    // prefetches) would otherwise stay "current" until the next prefetch, and the cache would never evict them.
    this.epoch++;
  }

  /** A clean entry whose value the backend just deleted from the store becomes known-absent. */
  markAbsent(id: string): void {
    const entry = this.entries.get(id);
    if (entry === undefined || entry.dirty) return;
    entry.present = false;
    entry.value = undefined;
    entry.raw = undefined;
    entry.expiresAt = undefined;
  }

  /** Drops every entry of one key group, dirty ones included (restore and drop replace the key group). */
  dropKeyGroup(keyGroup: KeyGroup): void {
    this.dropKeyGroups(keyGroup, keyGroup);
  }

  /** Drops every entry of key groups `first..last` (inclusive) in one pass over the cache. */
  dropKeyGroups(first: KeyGroup, last: KeyGroup): void {
    for (const [id, entry] of this.entries) {
      const keyGroup = keyGroupOfId(id);
      if (keyGroup < first || keyGroup > last) continue;
      this.entries.delete(id);
      entry.dirty = false;
    }
    this.dirtyEntries = this.dirtyEntries.filter((entry) => entry.dirty);
  }

  /**
   * Evicts clean entries, oldest place first, until the cache fits. An entry used since it took its place moves to
   * the end instead (once: the walk may meet it again there, and then it can go); the current batch's stay.
   */
  evict(): void {
    let excess = this.entries.size - this.capacity;
    if (excess <= 0) return;
    for (const [id, entry] of this.entries) {
      if (excess <= 0) return;
      if (entry.epoch === this.epoch) continue;
      if (entry.placed !== entry.epoch) {
        entry.placed = entry.epoch;
        this.entries.delete(id);
        this.entries.set(id, entry);
        continue;
      }
      if (entry.dirty) continue;
      this.entries.delete(id);
      excess--;
    }
  }

  clear(): void {
    this.entries.clear();
    this.dirtyEntries = [];
  }
}

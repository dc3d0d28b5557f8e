import { mkdir, readdir } from 'node:fs/promises';
import { WriteBackCache, type CacheEntry } from '../cache/write-back-cache';
import type {
  CheckpointableStateBackend,
  KeyGroupRange,
  LocalCheckpoint,
  StateBackendKind,
} from '../checkpoint/local-checkpoint';
import {
  StateNotLoadedError,
  type KeyGroup,
  type PutOptions,
  type StateNamespace,
  type StateRef,
} from '../contract';
import { StateBackendClosedError, StateCheckpointError } from '../errors';
import {
  idToStoreKey,
  keyGroupRange,
  keyGroupsRange,
  namespaceRange,
  stateKeyId,
  userKeyOf,
} from '../keys/key-layout';
import { composeKeyGroupImage, writeKeyGroupChanges } from '../snapshot/key-group-changes';
import { checkKeyGroupImage, imageEntryBatches, KeyGroupImageWriter } from '../snapshot/key-group-image';
import { type OrderedStore, type StoreEntry, type StoreWrite, WHOLE_STORE } from '../store/ordered-store';
import { decodeValue, encodeValue, isExpired, readExpiresAt } from '../values/value-codec';
import { Changelog } from './changelog';
import { SerialQueue } from './serial-queue';

/**
 * Restores write the image back in bounded batches (a large key group does not build one huge batch), large enough
 * that the per-batch round trip to the store's thread pool is amortised.
 */
const RESTORE_BATCH_ENTRIES = 16_384;

/**
 * The keyed state backend: a write-back cache (synchronous get/put/delete) over an ordered store (memory or
 * RocksDB). Every store-touching operation runs through one serial queue; get/put/delete never wait.
 *
 * TTL cleanup is lazy: an expired value is invisible at once, and becomes a delete in the cache when something
 * meets it (get, flush, snapshot, entries); the next flush removes it from the store.
 */
/** What `exclusive` hands out: the raw store, with the backend's queue held, for whole-range moves. */
export interface ExclusiveStoreAccess {
  /** Writes the cache's dirty entries first, so the store is the whole truth. */
  flush(): Promise<void>;
  /** Live (unexpired) entries of key groups `range`, in key order, in chunks. */
  scan(range: KeyGroupRange): AsyncIterable<readonly StoreEntry[]>;
  /** Drops key groups `range` from the cache and the store. */
  clear(range: KeyGroupRange): Promise<void>;
  write(entries: readonly StoreEntry[]): Promise<void>;
}

/** A full image of a key group as of a checkpoint's cut, and the changelog token it is valid with. */
interface PrebuiltImage {
  readonly token: object;
  readonly image: Buffer;
}

export class CachedStateBackend implements CheckpointableStateBackend {
  private readonly cache: WriteBackCache;
  private readonly queue = new SerialQueue();
  private closed = false;
  /**
   * The last ref and its cache id: a record's read and write of one state use the same (immutable) ref object, so
   * the id string is built, and hashed by the cache's Map, once instead of per access.
   */
  private lastRef: StateRef | undefined;
  private lastId = '';
  /** Images of the next checkpoint's turn key groups, being built from a snapshot of the previous cut. */
  private prebuilt: Promise<Map<KeyGroup, PrebuiltImage>> | null = null;
  /**
   * Images restored since the previous checkpoint: the next one's full image of such a key group is this image
   * plus the writes since, merged, not a scan of everything a restore (a rescale, a savepoint) just wrote.
   */
  private restoredImages = new Map<KeyGroup, PrebuiltImage>();

  /** `changelog`: checkpoints hand over each key group's changes since the previous one (checkpointKeyGroups). */
  constructor(
    private readonly store: OrderedStore,
    cacheEntries: number,
    private readonly clock: () => number,
    readonly kind: StateBackendKind = 'memory',
    private readonly changelog: Changelog | null = null,
  ) {
    this.cache = new WriteBackCache(cacheEntries);
  }

  async prefetch(refs: readonly StateRef[]): Promise<void> {
    this.checkOpen();
    return this.queue.run(async () => {
      this.cache.beginBatch();
      const missing: string[] = [];
      const requested = new Set<string>();
      for (const ref of refs) {
        const id = stateKeyId(ref);
        if (this.cache.lookup(id) === undefined && !requested.has(id)) {
          requested.add(id);
          missing.push(id);
        }
      }
      if (missing.length > 0) {
        const stored = await this.store.getMany(missing.map(idToStoreKey));
        for (let i = 0; i < missing.length; i++) this.cache.load(missing[i], stored[i]);
      }
      this.cache.evict();
    });
  }

  get<T>(ref: StateRef, now: number): T | undefined {
    this.checkOpen();
    const id = this.idOf(ref);
    const entry = this.cache.lookup(id);
    if (entry === undefined) {
      throw new StateNotLoadedError(
        `state ${ref.namespace} in key group ${ref.keyGroup} was read without prefetch (or was evicted since)`,
      );
    }
    if (!entry.present) return undefined;
    if (isExpired(entry.expiresAt, now)) {
      this.cache.write(id, false, undefined, undefined);
      return undefined;
    }
    return this.cache.valueOf<T>(entry);
  }

  /** Putting `undefined` deletes: state cannot tell a stored undefined from an absent value. */
  put<T>(ref: StateRef, value: T, options?: PutOptions): void {
    this.checkOpen();
    if (value === undefined) this.cache.write(this.idOf(ref), false, undefined, undefined);
    else this.cache.write(this.idOf(ref), true, value, options?.expiresAt);
  }

  delete(ref: StateRef): void {
    this.checkOpen();
    this.cache.write(this.idOf(ref), false, undefined, undefined);
  }

  private idOf(ref: StateRef): string {
    if (ref !== this.lastRef) {
      this.lastId = stateKeyId(ref);
      this.lastRef = ref;
    }
    return this.lastId;
  }

  async flush(): Promise<void> {
    this.checkOpen();
    return this.queue.run(() => this.flushNow());
  }

  async *entries<T>(keyGroup: KeyGroup, namespace: StateNamespace, now: number): AsyncIterable<[Uint8Array, T]> {
    this.checkOpen();
    // Flushing first makes the store the whole truth; the scan then sees the state as of this call.
    await this.flush();
    const expired: Buffer[] = [];
    try {
      for await (const chunk of this.store.scan(namespaceRange(keyGroup, namespace))) {
        for (const { key, value } of chunk) {
          if (isExpired(readExpiresAt(value), now)) expired.push(key);
          else yield [userKeyOf(key, namespace), decodeValue<T>(value).value];
        }
      }
    } finally {
      if (expired.length > 0 && !this.closed) await this.queue.run(() => this.dropExpired(expired));
    }
  }

  async isEmpty(): Promise<boolean> {
    this.checkOpen();
    await this.flush();
    for await (const chunk of this.store.scan(WHOLE_STORE)) if (chunk.length > 0) return false;
    return true;
  }

  async snapshotKeyGroup(keyGroup: KeyGroup): Promise<Uint8Array> {
    this.checkOpen();
    return this.queue.run(async () => {
      await this.flushNow();
      return this.imageOf(keyGroup);
    });
  }

  /**
   * A checkpoint's images of `keyGroups` (the ones this backend owns), after a flush: without a changelog, full
   * images; with one, a key-group changes image for each key group that has a full image in an earlier checkpoint
   * (omitted when nothing changed), and a full image for the others and for those whose turn it is to be
   * materialised (backend/changelog.ts). The caller keeps the chain: full image, then each changes image in order.
   */
  async checkpointKeyGroups(keyGroups: readonly KeyGroup[]): Promise<Map<KeyGroup, Uint8Array>> {
    this.checkOpen();
    return this.queue.run(async () => {
      await this.flushNow();
      const prebuilt = await this.takePrebuilt();
      // A key group restored since the previous cut: its prebuilt image (of that cut) is stale, the restored one is not.
      for (const [keyGroup, image] of this.restoredImages) prebuilt.set(keyGroup, image);
      this.restoredImages = new Map();
      const images = new Map<KeyGroup, Uint8Array>();
      const plans = this.changelog?.plan(keyGroups) ?? keyGroups.map((keyGroup) => ({ keyGroup, kind: 'full' as const, since: null }));
      for (const plan of plans) {
        if (plan.kind === 'changes') {
          if (plan.image) images.set(plan.keyGroup, plan.image);
          continue;
        }
        const ready = prebuilt.get(plan.keyGroup);
        const image =
          ready !== undefined && plan.since !== null && ready.token === plan.since
            ? composeKeyGroupImage(plan.keyGroup, ready.image, plan.since.size > 0 ? [writeKeyGroupChanges(plan.keyGroup, plan.since)] : [])
            : await this.imageOf(plan.keyGroup);
        this.changelog?.rebased(plan.keyGroup, image.length);
        images.set(plan.keyGroup, image);
      }
      this.prebuildTurns(keyGroups);
      return images;
    });
  }

  /** The next checkpointKeyGroups takes full images only (the changes of a checkpoint that never completed were lost). */
  requestFullCheckpoint(): void {
    this.changelog?.requestFull();
  }

  /** A full image of one key group from the store (run inside the queue, after a flush); drops expired values. */
  private async imageOf(keyGroup: KeyGroup): Promise<Buffer> {
    const expired: Buffer[] = [];
    const image = await this.buildImage(keyGroup, this.store.scan(keyGroupRange(keyGroup)), expired);
    await this.dropExpired(expired);
    return image;
  }

  private async buildImage(keyGroup: KeyGroup, chunks: AsyncIterable<readonly StoreEntry[]>, expired?: Buffer[]): Promise<Buffer> {
    const now = this.clock();
    const image = new KeyGroupImageWriter(keyGroup);
    for await (const chunk of chunks) {
      for (const { key, value } of chunk) {
        if (!isExpired(readExpiresAt(value), now)) image.add(key, value);
        else expired?.push(key);
      }
    }
    return image.finish();
  }

  /**
   * Called at a checkpoint's cut (inside the queue, after its flush): the key groups whose turn comes at the next
   * checkpoint are imaged now from a store snapshot of this cut, in the background, so that the next barrier only
   * merges this cut's image with the writes since (composeKeyGroupImage) instead of scanning them while the subtask
   * waits. Stores without snapshots (memory) image at the barrier as before; so does any key group replaced meanwhile.
   */
  private prebuildTurns(keyGroups: readonly KeyGroup[]): void {
    const turns = this.changelog?.upcomingTurns(keyGroups) ?? [];
    if (turns.length === 0 || this.store.snapshot === undefined) return;
    const snapshot = this.store.snapshot();
    this.prebuilt = (async () => {
      const built = new Map<KeyGroup, PrebuiltImage>();
      try {
        for (const { keyGroup, token } of turns) {
          built.set(keyGroup, { token, image: await this.buildImage(keyGroup, snapshot.scan(keyGroupRange(keyGroup))) });
        }
      } finally {
        await snapshot.release();
      }
      return built;
    })().catch(() => new Map<KeyGroup, PrebuiltImage>()); // a failed prebuild is only a lost head start
  }

  /** The images prebuilt since the previous checkpoint (waiting for them if they are not done yet). */
  private async takePrebuilt(): Promise<Map<KeyGroup, PrebuiltImage>> {
    const prebuilt = this.prebuilt;
    this.prebuilt = null;
    return prebuilt ? await prebuilt : new Map<KeyGroup, PrebuiltImage>();
  }

  async restoreKeyGroup(keyGroup: KeyGroup, image: Uint8Array): Promise<void> {
    this.checkOpen();
    // Validate the whole image before anything is dropped: a corrupt image must leave the key group as it was.
    const view = checkKeyGroupImage(image, keyGroup);
    return this.queue.run(async () => {
      const now = this.clock();
      this.cache.dropKeyGroup(keyGroup);
      const token = this.changelog?.restored(keyGroup, image.byteLength);
      if (token) this.restoredImages.set(keyGroup, { token, image: view.bytes });
      else this.restoredImages.delete(keyGroup);
      await this.store.deleteRange(keyGroupRange(keyGroup));
      // One batch is written while the next is prepared: the store's native work overlaps the JS that feeds it.
      let writing: Promise<void> = Promise.resolve();
      for (const batch of imageEntryBatches(view, RESTORE_BATCH_ENTRIES)) {
        const writes: StoreWrite[] = [];
        for (const { key, value } of batch) if (!isExpired(readExpiresAt(value), now)) writes.push({ kind: 'put', key, value });
        await writing;
        writing = this.store.writeBatch(writes);
      }
      await writing;
    });
  }

  async dropKeyGroup(keyGroup: KeyGroup): Promise<void> {
    this.checkOpen();
    return this.queue.run(async () => {
      this.cache.dropKeyGroup(keyGroup);
      this.changelog?.forget(keyGroup);
      this.restoredImages.delete(keyGroup);
      await this.store.deleteRange(keyGroupRange(keyGroup));
    });
  }

  async checkpoint(dir: string): Promise<LocalCheckpoint> {
    this.checkOpen();
    const store = this.store;
    if (store.checkpoint === undefined) throw new StateCheckpointError(`the ${this.kind} store cannot be checkpointed`);
    await mkdir(dir, { recursive: true });
    if ((await readdir(dir)).length > 0) throw new StateCheckpointError(`checkpoint directory ${dir} is not empty`);
    return this.queue.run(async () => {
      await this.flushNow();
      const { files, pausedBackgroundWork } = await store.checkpoint!(dir);
      return this.kind === 'lsm' ? { kind: this.kind, dir, files, pausedBackgroundWork } : { kind: this.kind, dir, files };
    });
  }

  /** Runs `task` with this backend's queue held and raw access to its store (copying key groups between backends). */
  exclusive<T>(task: (access: ExclusiveStoreAccess) => Promise<T>): Promise<T> {
    this.checkOpen();
    const store = this.store;
    const clock = this.clock;
    const cache = this.cache;
    const changelog = this.changelog;
    return this.queue.run(() =>
      task({
        flush: () => this.flushNow(),
        async *scan(range) {
          const now = clock();
          for await (const chunk of store.scan(keyGroupsRange(range))) {
            yield chunk.filter(({ value }) => !isExpired(readExpiresAt(value), now));
          }
        },
        async clear(range) {
          cache.dropKeyGroups(range.start, range.end);
          changelog?.forgetRange(range.start, range.end);
          await store.deleteRange(keyGroupsRange(range));
        },
        write: (entries) => {
          for (const { key } of entries) changelog?.forget(key.readUInt16BE(0));
          return store.writeBatch(entries.map(({ key, value }): StoreWrite => ({ kind: 'put', key, value })));
        },
      }),
    );
  }

  /** Flushes dirty state, then closes the store. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    return this.queue.run(async () => {
      try {
        await this.flushNow();
      } finally {
        this.cache.clear();
        await this.takePrebuilt(); // its scans read the store
        await this.store.close();
      }
    });
  }

  private async flushNow(): Promise<void> {
    const items = this.cache.takeDirty();
    if (items.length === 0) return;
    const now = this.clock();
    const writes: StoreWrite[] = new Array(items.length);
    const deleted = new Set<CacheEntry>();
    for (let i = 0; i < items.length; i++) {
      const { entry } = items[i];
      const key = idToStoreKey(entry.id);
      if (entry.present && !isExpired(entry.expiresAt, now)) {
        writes[i] = { kind: 'put', key, value: encodeValue(entry.value, entry.expiresAt) };
      } else {
        writes[i] = { kind: 'delete', key };
        deleted.add(entry);
      }
      if (this.changelog) {
        const write = writes[i];
        this.changelog.record(entry.id, write.kind === 'put' ? write.value : null);
      }
    }
    await this.store.writeBatch(writes);
    this.cache.markFlushed(items, deleted);
    this.cache.evict();
  }

  /**
   * Deletes values a scan found expired. Runs inside the queue and reads the keys again first: between a lazy
   * scan and this cleanup the key may have been written anew, and a dirty cache entry will be flushed over it.
   */
  private async dropExpired(storeKeys: readonly Buffer[]): Promise<void> {
    if (storeKeys.length === 0) return;
    const now = this.clock();
    const stored = await this.store.getMany(storeKeys);
    const writes: StoreWrite[] = [];
    for (let i = 0; i < storeKeys.length; i++) {
      const value = stored[i];
      const id = storeKeys[i].toString('latin1');
      if (value === undefined || !isExpired(readExpiresAt(value), now) || this.cache.isDirty(id)) continue;
      writes.push({ kind: 'delete', key: storeKeys[i] });
      this.cache.markAbsent(id);
    }
    await this.store.writeBatch(writes);
  }

  private checkOpen(): void {
    if (this.closed) throw new StateBackendClosedError('keyed state backend is closed');
  }
}


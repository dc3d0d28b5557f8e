import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createStateBackend,
  StateBackendClosedError,
  StateImageError,
  StateNotLoadedError,
  type KeyedStateBackend,
  type StateRef,
} from '../index';
import type { KeyRange } from '../keys/key-layout';
import { MemoryStore } from '../store/memory-store';
import type { OrderedStore, StoreEntry, StoreWrite } from '../store/ordered-store';
import { CachedStateBackend } from './cached-state-backend';

const dirs: string[] = [];
const open: KeyedStateBackend[] = [];

afterEach(async () => {
  for (const backend of open.splice(0)) await backend.close().catch(() => undefined);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

type Kind = 'memory' | 'lsm';

async function backendOf(kind: Kind, options: { cacheEntries?: number; clock?: () => number; path?: string } = {}) {
  let path = options.path;
  if (kind === 'lsm' && path === undefined) {
    path = mkdtempSync(join(tmpdir(), 'weir-state-'));
    dirs.push(path);
  }
  const backend = await createStateBackend({ kind, ...options, path });
  open.push(backend);
  return backend;
}

const ref = (keyGroup: number, key: string, namespace = 'op/count'): StateRef => ({
  keyGroup,
  namespace,
  key: Buffer.from(key),
});

async function readAll(backend: KeyedStateBackend, refs: StateRef[], now = 0): Promise<unknown[]> {
  await backend.prefetch(refs);
  return refs.map((r) => backend.get(r, now));
}

async function listEntries(backend: KeyedStateBackend, keyGroup: number, namespace: string, now = 0) {
  const out: [string, unknown][] = [];
  for await (const [key, value] of backend.entries(keyGroup, namespace, now)) out.push([Buffer.from(key).toString(), value]);
  return out;
}

/** Counts round trips to the store, to check the batching promises of the backend. */
class CountingStore implements OrderedStore {
  readonly inner = new MemoryStore();
  getManyCalls = 0;
  writeBatchCalls = 0;
  getMany(keys: readonly Buffer[]) {
    this.getManyCalls++;
    return this.inner.getMany(keys);
  }
  writeBatch(writes: readonly StoreWrite[]) {
    this.writeBatchCalls++;
    return this.inner.writeBatch(writes);
  }
  scan(range: KeyRange): AsyncIterable<readonly StoreEntry[]> {
    return this.inner.scan(range);
  }
  deleteRange(range: KeyRange) {
    return this.inner.deleteRange(range);
  }
  close() {
    return this.inner.close();
  }
}

describe('cached state backend: batching', () => {
  it('prefetches every missing ref in one read and flushes every dirty entry in one write', async () => {
    const store = new CountingStore();
    const backend = new CachedStateBackend(store, 1000, Date.now);
    const refs = Array.from({ length: 200 }, (_, i) => ref(i % 7, `k${i}`));
    await backend.prefetch([...refs, ...refs]);
    expect(store.getManyCalls).toBe(1);
    for (const r of refs) backend.put(r, r.keyGroup);
    await backend.flush();
    expect(store.writeBatchCalls).toBe(1);
    await backend.prefetch(refs);
    expect(store.getManyCalls).toBe(1);
    await backend.flush();
    expect(store.writeBatchCalls).toBe(1);
    await backend.close();
  });
});

describe.each<Kind>(['memory', 'lsm'])('keyed state backend (%s)', (kind) => {
  it('throws StateNotLoadedError for a ref neither prefetched nor written', async () => {
    const backend = await backendOf(kind);
    expect(() => backend.get(ref(1, 'never'), 0)).toThrow(StateNotLoadedError);
  });

  it('reads known-absent refs as undefined after prefetch, and reads its own writes without prefetch', async () => {
    const backend = await backendOf(kind);
    expect(await readAll(backend, [ref(1, 'a')])).toEqual([undefined]);
    backend.put(ref(1, 'b'), { n: 1 });
    expect(backend.get(ref(1, 'b'), 0)).toEqual({ n: 1 });
    backend.put(ref(1, 'a'), new Map([['x', 1n]]));
    expect(backend.get(ref(1, 'a'), 0)).toEqual(new Map([['x', 1n]]));
  });

  it('persists puts and deletes through flush and reads them back after eviction', async () => {
    const backend = await backendOf(kind, { cacheEntries: 4 });
    const refs = Array.from({ length: 50 }, (_, i) => ref(i % 3, `k${i}`));
    refs.forEach((r, i) => backend.put(r, { i, tags: new Set([i]) }));
    await backend.flush();
    backend.delete(refs[7]);
    backend.put(refs[8], undefined);
    await backend.flush();
    // Push everything out of the small cache, then read it all back from the store.
    await backend.prefetch([ref(9, 'other1'), ref(9, 'other2'), ref(9, 'other3'), ref(9, 'other4')]);
    await backend.prefetch([ref(9, 'other5')]);
    expect(() => backend.get(refs[0], 0)).toThrow(StateNotLoadedError);
    const values = await readAll(backend, refs);
    expect(values[7]).toBeUndefined();
    expect(values[8]).toBeUndefined();
    expect(values[9]).toEqual({ i: 9, tags: new Set([9]) });
    expect(values.filter((x) => x !== undefined)).toHaveLength(48);
  });

  it('never evicts dirty entries before they are flushed', async () => {
    const backend = await backendOf(kind, { cacheEntries: 10 });
    const dirty = Array.from({ length: 500 }, (_, i) => ref(4, `dirty${i}`));
    dirty.forEach((r, i) => backend.put(r, i));
    // Loads and evictions of clean entries happen all around the dirty ones.
    for (let round = 0; round < 5; round++) {
      await backend.prefetch(Array.from({ length: 50 }, (_, i) => ref(5, `clean${round}-${i}`)));
    }
    expect(dirty.map((r) => backend.get(r, 0))).toEqual(dirty.map((_, i) => i));
    await backend.flush();
    await backend.prefetch(Array.from({ length: 50 }, (_, i) => ref(5, `more${i}`)));
    expect(await readAll(backend, dirty)).toEqual(dirty.map((_, i) => i));
  });

  it('keeps everything a batch prefetched even when the batch is larger than the cache', async () => {
    const backend = await backendOf(kind, { cacheEntries: 5 });
    const refs = Array.from({ length: 60 }, (_, i) => ref(6, `k${i}`));
    refs.forEach((r) => backend.put(r, 'v'));
    await backend.flush();
    await backend.prefetch([ref(7, 'x')]);
    expect(await readAll(backend, refs)).toEqual(refs.map(() => 'v'));
  });

  it('hides values at and after their expiry, and drops them from the store on flush', async () => {
    let clock = 1_000;
    const backend = await backendOf(kind, { clock: () => clock });
    backend.put(ref(1, 'ttl'), 'short', { expiresAt: 2_000 });
    backend.put(ref(1, 'kept'), 'long', { expiresAt: 9_000 });
    expect(backend.get(ref(1, 'ttl'), 1_999)).toBe('short');
    await backend.flush();
    expect(await listEntries(backend, 1, 'op/count', 1_999)).toEqual([
      ['kept', 'long'],
      ['ttl', 'short'],
    ]);
    expect(await listEntries(backend, 1, 'op/count', 2_000)).toEqual([['kept', 'long']]);
    // Still stored until someone meets it after its expiry: a snapshot at clock ≥ expiry drops it for good.
    clock = 2_000;
    const image = await backend.snapshotKeyGroup(1);
    await backend.restoreKeyGroup(1, image);
    expect(await listEntries(backend, 1, 'op/count', 0)).toEqual([['kept', 'long']]);
    // A put that expires before the flush never reaches the store.
    backend.put(ref(1, 'gone'), 'x', { expiresAt: 2_500 });
    clock = 3_000;
    await backend.flush();
    expect(await listEntries(backend, 1, 'op/count', 0)).toEqual([['kept', 'long']]);
  });

  it('turns an expired value into a delete when a read meets it', async () => {
    let clock = 0;
    const backend = await backendOf(kind, { clock: () => clock });
    backend.put(ref(2, 'k'), 1, { expiresAt: 100 });
    await backend.flush();
    expect(backend.get(ref(2, 'k'), 100)).toBeUndefined();
    clock = 50;
    await backend.flush();
    expect(await listEntries(backend, 2, 'op/count', 0)).toEqual([]);
  });

  it('lists entries of one namespace in one key group, dirty writes included', async () => {
    const backend = await backendOf(kind);
    backend.put(ref(3, 'b'), 2);
    backend.put(ref(3, 'a'), 1);
    backend.put(ref(3, 'a', 'op/other'), 'no');
    backend.put(ref(4, 'a'), 'no');
    await backend.flush();
    backend.put(ref(3, 'c'), 3);
    backend.delete(ref(3, 'b'));
    expect(await listEntries(backend, 3, 'op/count')).toEqual([
      ['a', 1],
      ['c', 3],
    ]);
  });

  it('snapshots and restores one key group alone, replacing it entirely and leaving the others alone', async () => {
    const backend = await backendOf(kind);
    for (const keyGroup of [1, 2, 3]) {
      backend.put(ref(keyGroup, 'a'), `a${keyGroup}`);
      backend.put(ref(keyGroup, 'b', 'op/other'), [keyGroup]);
    }
    backend.put(ref(2, 'unflushed'), 'in the snapshot too');
    const image = await backend.snapshotKeyGroup(2);

    backend.put(ref(2, 'a'), 'changed');
    backend.put(ref(2, 'added'), 'after snapshot');
    backend.delete(ref(2, 'b', 'op/other'));
    backend.put(ref(1, 'a'), 'changed 1');
    backend.put(ref(3, 'new'), 'new 3');
    await backend.flush();
    await backend.prefetch([ref(2, 'a'), ref(2, 'added'), ref(2, 'b', 'op/other')]);
    backend.put(ref(2, 'a'), 'dirty, discarded by restore');

    await backend.restoreKeyGroup(2, image);

    expect(await readAll(backend, [ref(2, 'a'), ref(2, 'added'), ref(2, 'b', 'op/other')])).toEqual([
      'a2',
      undefined,
      [2],
    ]);
    expect(await listEntries(backend, 2, 'op/count')).toEqual([
      ['a', 'a2'],
      ['unflushed', 'in the snapshot too'],
    ]);
    expect(await listEntries(backend, 1, 'op/count')).toEqual([['a', 'changed 1']]);
    expect(await listEntries(backend, 3, 'op/count')).toEqual([
      ['a', 'a3'],
      ['new', 'new 3'],
    ]);
    expect(await listEntries(backend, 3, 'op/other')).toEqual([['b', [3]]]);
  });

  it('restores images of either backend (cross-backend), with values and expiry intact', async () => {
    const clock = () => 1_000;
    const source = await backendOf(kind === 'memory' ? 'lsm' : 'memory', { clock });
    source.put(ref(9, 'm'), { at: new Date(5), counts: new Map([[1, 2]]) });
    source.put(ref(9, 't'), 't', { expiresAt: 10_000 });
    source.put(ref(8, 'other'), 'not in the image');
    const image = await source.snapshotKeyGroup(9);

    const target = await backendOf(kind, { clock });
    target.put(ref(9, 'stale'), 'replaced');
    await target.restoreKeyGroup(9, image);
    expect(await listEntries(target, 9, 'op/count', 9_999)).toEqual([
      ['m', { at: new Date(5), counts: new Map([[1, 2]]) }],
      ['t', 't'],
    ]);
    expect(await listEntries(target, 9, 'op/count', 10_000)).toHaveLength(1);
    expect(await listEntries(target, 8, 'op/count')).toEqual([]);
    // Snapshot of the restored group equals the source's image byte for byte: the format is backend-independent.
    expect(Buffer.from(await target.snapshotKeyGroup(9)).equals(Buffer.from(image))).toBe(true);
  });

  it('forgets cached known-absent refs of a restored key group', async () => {
    const source = await backendOf(kind);
    source.put(ref(5, 'k'), 'restored');
    const image = await source.snapshotKeyGroup(5);
    const target = await backendOf(kind);
    expect(await readAll(target, [ref(5, 'k')])).toEqual([undefined]);
    await target.restoreKeyGroup(5, image);
    expect(() => target.get(ref(5, 'k'), 0)).toThrow(StateNotLoadedError);
    expect(await readAll(target, [ref(5, 'k')])).toEqual(['restored']);
  });

  it('rejects a corrupt or foreign image and leaves the key group as it was', async () => {
    const backend = await backendOf(kind);
    backend.put(ref(1, 'k'), 'kept');
    const image = Buffer.from(await backend.snapshotKeyGroup(1));
    await expect(backend.restoreKeyGroup(2, image)).rejects.toThrow(StateImageError);
    image[image.length - 5] ^= 0xff;
    await expect(backend.restoreKeyGroup(1, image)).rejects.toThrow(StateImageError);
    expect(await listEntries(backend, 1, 'op/count')).toEqual([['k', 'kept']]);
  });

  it('drops one key group, in the store and in the cache, and nothing else', async () => {
    const backend = await backendOf(kind);
    backend.put(ref(1, 'k'), 1);
    backend.put(ref(2, 'k'), 2);
    backend.put(ref(2, 'k', 'op/other'), 2);
    await backend.flush();
    backend.put(ref(2, 'dirty'), 'dropped too');
    await backend.dropKeyGroup(2);
    expect(await readAll(backend, [ref(1, 'k'), ref(2, 'k'), ref(2, 'dirty')])).toEqual([1, undefined, undefined]);
    expect(await listEntries(backend, 2, 'op/other')).toEqual([]);
    expect(await backend.snapshotKeyGroup(2)).toEqual(await (await backendOf('memory')).snapshotKeyGroup(2));
  });

  it('is empty until something is written (dirty writes included), and again once everything is dropped', async () => {
    const backend = await backendOf(kind);
    expect(await backend.isEmpty!()).toBe(true);
    backend.put(ref(3, 'k'), 1);
    expect(await backend.isEmpty!()).toBe(false);
    await backend.dropKeyGroup(3);
    expect(await backend.isEmpty!()).toBe(true);
  });

  it('flushes on close and refuses calls afterwards', async () => {
    const backend = await backendOf(kind);
    backend.put(ref(1, 'k'), 1);
    await backend.close();
    expect(() => backend.put(ref(1, 'k'), 2)).toThrow(StateBackendClosedError);
    await expect(backend.prefetch([ref(1, 'k')])).rejects.toThrow(StateBackendClosedError);
  });
});

describe('lsm keyed state backend', () => {
  it('reopens the state left in its directory', async () => {
    const path = mkdtempSync(join(tmpdir(), 'weir-state-'));
    dirs.push(path);
    const first = await createStateBackend({ kind: 'lsm', path });
    first.put(ref(1, 'k'), { durable: true });
    await first.close();
    const second = await backendOf('lsm', { path });
    expect(await readAll(second, [ref(1, 'k')])).toEqual([{ durable: true }]);
  });

  it('needs a path', async () => {
    await expect(createStateBackend({ kind: 'lsm' })).rejects.toThrow(/needs a path/);
  });
});

import { describe, expect, it } from 'vitest';
import { stateKeyId } from '../keys/key-layout';
import { encodeValue } from '../values/value-codec';
import { WriteBackCache } from './write-back-cache';

const id = (keyGroup: number, key: string): string =>
  stateKeyId({ keyGroup, namespace: 'op/s', key: Buffer.from(key) });

describe('write-back cache', () => {
  it('caches loaded values lazily decoded and absent ones as known-absent', () => {
    const cache = new WriteBackCache(10);
    cache.beginBatch();
    cache.load(id(0, 'a'), encodeValue({ n: 1 }, 500));
    cache.load(id(0, 'b'), undefined);
    const a = cache.lookup(id(0, 'a'));
    expect(a?.present).toBe(true);
    expect(a?.expiresAt).toBe(500);
    expect(cache.valueOf(a!)).toEqual({ n: 1 });
    expect(cache.lookup(id(0, 'b'))?.present).toBe(false);
    expect(cache.lookup(id(0, 'c'))).toBeUndefined();
  });

  it('never lets a load overwrite a write made while the load was in flight', () => {
    const cache = new WriteBackCache(10);
    cache.write(id(0, 'a'), true, 'new', undefined);
    cache.load(id(0, 'a'), encodeValue('old', undefined));
    expect(cache.valueOf(cache.lookup(id(0, 'a'))!)).toBe('new');
  });

  it('evicts least recently used clean entries, never dirty ones', () => {
    const cache = new WriteBackCache(3);
    cache.beginBatch();
    for (const key of ['a', 'b', 'c']) cache.write(id(0, key), true, key, undefined);
    cache.beginBatch();
    for (const key of ['d', 'e']) cache.load(id(0, key), undefined);
    cache.evict();
    // Five entries, capacity three, but the three dirty ones stay and the two clean ones belong to this batch.
    expect(cache.size).toBe(5);
    cache.beginBatch();
    cache.evict();
    expect(cache.size).toBe(3);
    for (const key of ['a', 'b', 'c']) expect(cache.lookup(id(0, key))?.dirty).toBe(true);
  });

  it('evicts in least-recently-used order across batches', () => {
    const cache = new WriteBackCache(2);
    cache.beginBatch();
    cache.load(id(0, 'a'), undefined);
    cache.load(id(0, 'b'), undefined);
    cache.beginBatch();
    cache.lookup(id(0, 'a'));
    cache.load(id(0, 'c'), undefined);
    cache.evict();
    expect(cache.lookup(id(0, 'b'))).toBeUndefined();
    expect(cache.lookup(id(0, 'a'))).toBeDefined();
    expect(cache.lookup(id(0, 'c'))).toBeDefined();
  });

  it('gives an entry used since it was placed a second chance instead of evicting it', () => {
    const cache = new WriteBackCache(2);
    cache.beginBatch();
    cache.load(id(0, 'a'), undefined);
    cache.load(id(0, 'b'), undefined);
    cache.beginBatch();
    cache.lookup(id(0, 'a'));
    cache.beginBatch();
    cache.load(id(0, 'c'), undefined);
    cache.evict();
    expect(cache.lookup(id(0, 'b'))).toBeUndefined();
    expect(cache.lookup(id(0, 'a'))).toBeDefined();
    expect(cache.lookup(id(0, 'c'))).toBeDefined();
  });

  it('evicts entries written without a prefetch once they are flushed', () => {
    const cache = new WriteBackCache(2);
    for (const key of ['a', 'b', 'c', 'd']) cache.write(id(0, key), true, key, undefined);
    cache.evict();
    expect(cache.size).toBe(4); // dirty
    cache.markFlushed(cache.takeDirty(), new Set());
    cache.evict();
    expect(cache.size).toBe(2);
  });

  it('keeps an entry dirty when it was written again while its flush was in flight', () => {
    const cache = new WriteBackCache(10);
    cache.write(id(0, 'a'), true, 1, undefined);
    cache.write(id(0, 'b'), true, 1, undefined);
    const items = cache.takeDirty();
    cache.write(id(0, 'a'), true, 2, undefined);
    cache.markFlushed(items, new Set());
    expect(cache.lookup(id(0, 'a'))?.dirty).toBe(true);
    expect(cache.lookup(id(0, 'b'))?.dirty).toBe(false);
    expect(cache.dirtyCount).toBe(1);
  });

  it('turns entries flushed as deletes into known-absent ones', () => {
    const cache = new WriteBackCache(10);
    cache.write(id(0, 'a'), true, 'expired', 1);
    const items = cache.takeDirty();
    cache.markFlushed(items, new Set([items[0].entry]));
    const entry = cache.lookup(id(0, 'a'));
    expect(entry?.present).toBe(false);
    expect(entry?.dirty).toBe(false);
  });

  it('drops one key group, dirty entries included, and nothing else', () => {
    const cache = new WriteBackCache(10);
    cache.write(id(1, 'a'), true, 1, undefined);
    cache.load(id(1, 'b'), undefined);
    cache.write(id(2, 'a'), true, 1, undefined);
    cache.load(id(258, 'a'), undefined);
    cache.dropKeyGroup(1);
    expect(cache.lookup(id(1, 'a'))).toBeUndefined();
    expect(cache.lookup(id(1, 'b'))).toBeUndefined();
    expect(cache.lookup(id(2, 'a'))).toBeDefined();
    expect(cache.lookup(id(258, 'a'))).toBeDefined();
  });
});

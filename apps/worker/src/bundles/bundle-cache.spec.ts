import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBlobStore } from '../../../../libs/checkpoint/src/storage/memory-blob-store.fixture';
import { BundleCache, BundleIntegrityError, type BundleCacheLogger } from './bundle-cache';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const KB = 1024;

/** A bundle of `size` bytes in the fake blob store; returns its key and sha256. */
async function upload(blobs: MemoryBlobStore, name: string, size: number) {
  const bytes = Buffer.alloc(size, name);
  const key = `bundles/${name}.js`;
  await blobs.put(key, bytes);
  return { key, sha256: createHash('sha256').update(bytes).digest('hex') };
}

function setUp(maxBytes: number, inUse: Set<string> = new Set()) {
  const dir = mkdtempSync(join(tmpdir(), 'weir-bundles-'));
  dirs.push(dir);
  const blobs = new MemoryBlobStore();
  const warnings: string[] = [];
  const logger: BundleCacheLogger = { warn: (_details, message) => warnings.push(message) };
  const cache = new BundleCache(blobs, dir, { maxBytes, inUse: () => inUse, logger });
  const cached = () => readdirSync(dir).sort();
  /** Ages a cached file, as if last used `secondsAgo` ago. */
  const age = (sha256: string, secondsAgo: number) => {
    const at = new Date(Date.now() - secondsAgo * 1000);
    utimesSync(join(dir, `${sha256}.js`), at, at);
  };
  return { dir, blobs, cache, cached, age, warnings };
}

describe('BundleCache', () => {
  it('downloads a bundle once, verified, and refuses one whose bytes changed', async () => {
    const { blobs, cache, cached } = setUp(100 * KB);
    const a = await upload(blobs, 'a', KB);
    const path = await cache.fetch(a.key, a.sha256);
    expect(path).toMatch(new RegExp(`${a.sha256}\\.js$`));
    blobs.objects.delete(a.key);
    expect(await cache.fetch(a.key, a.sha256)).toBe(path); // a hit: the blob store is not asked
    const b = await upload(blobs, 'b', KB);
    await expect(cache.fetch(b.key, a.sha256.replace(/^./, '0'))).rejects.toBeInstanceOf(BundleIntegrityError);
    expect(cached()).toEqual([`${a.sha256}.js`]);
  });

  it('evicts the least recently used past the cap, never one in use nor the one just fetched', async () => {
    const inUse = new Set<string>();
    const { blobs, cache, cached, age } = setUp(3 * KB, inUse);
    const [a, b, c, d] = await Promise.all(['a', 'b', 'c', 'd'].map((n) => upload(blobs, n, KB)));
    for (const x of [a, b, c]) await cache.fetch(x.key, x.sha256);
    age(a.sha256, 300); // the oldest, but a job runs it
    age(b.sha256, 200);
    age(c.sha256, 100);
    inUse.add(a.sha256);
    await cache.fetch(d.key, d.sha256);
    expect(cached()).toEqual([a, c, d].map((x) => `${x.sha256}.js`).sort());
  });

  it('refreshes recency on a hit, and fetches an evicted bundle again on demand', async () => {
    const { blobs, cache, cached, age, dir } = setUp(2 * KB);
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((n) => upload(blobs, n, KB)));
    await cache.fetch(a.key, a.sha256);
    await cache.fetch(b.key, b.sha256);
    age(a.sha256, 200);
    age(b.sha256, 100);
    await cache.fetch(a.key, a.sha256); // a hit: now a is the most recently used
    expect(statSync(join(dir, `${a.sha256}.js`)).mtimeMs).toBeGreaterThan(Date.now() - 10_000);
    await cache.fetch(c.key, c.sha256);
    expect(cached()).toEqual([a, c].map((x) => `${x.sha256}.js`).sort());
    await cache.fetch(b.key, b.sha256); // evicted: downloaded again (and a, now the oldest, goes)
    expect(cached()).toContain(`${b.sha256}.js`);
    expect(cached()).toHaveLength(2);
  });

  it('keeps a bundle larger than the cap, and says so once', async () => {
    const { blobs, cache, cached, warnings } = setUp(KB);
    const small = await upload(blobs, 's', KB / 2);
    const huge = await upload(blobs, 'h', 4 * KB);
    await cache.fetch(small.key, small.sha256);
    await cache.fetch(huge.key, huge.sha256);
    expect(cached()).toEqual([`${huge.sha256}.js`]);
    expect(warnings.filter((w) => w.includes('larger than'))).toHaveLength(1);
  });

  it('removes downloads a crash left behind an hour ago, not one in progress', async () => {
    const { blobs, cache, cached, dir } = setUp(KB);
    const stale = join(dir, 'dead.js.1234.partial');
    const fresh = join(dir, 'live.js.5678.partial');
    writeFileSync(stale, 'x');
    writeFileSync(fresh, 'x');
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
    utimesSync(stale, old, old);
    const a = await upload(blobs, 'a', KB / 2);
    await cache.fetch(a.key, a.sha256);
    expect(cached()).toEqual([`${a.sha256}.js`, 'live.js.5678.partial'].sort());
  });

  it('fetches different bundles at once without either failing, and settles within the cap', async () => {
    const { blobs, cache, cached } = setUp(3 * KB);
    const bundles = await Promise.all([...'abcdefgh'].map((n) => upload(blobs, n, KB)));
    const paths = await Promise.all(bundles.map((x) => cache.fetch(x.key, x.sha256)));
    expect(paths).toHaveLength(8);
    expect(cached().length).toBeLessThanOrEqual(3);
    expect(cached().every((name) => name.endsWith('.js'))).toBe(true);
  });

  it('downloads a bundle fetched twice at once only once', async () => {
    const { blobs, cache, cached } = setUp(100 * KB);
    const a = await upload(blobs, 'a', 64 * KB);
    let gets = 0;
    const get = blobs.get.bind(blobs);
    blobs.get = (key) => (gets++, get(key));
    const paths = await Promise.all([1, 2, 3].map(() => cache.fetch(a.key, a.sha256)));
    expect(new Set(paths).size).toBe(1);
    expect(gets).toBe(1);
    expect(cached()).toEqual([`${a.sha256}.js`]);
  });

  it('never fails a fetch because files vanish under eviction (two processes sharing the directory)', async () => {
    const { blobs, cache, cached, dir, warnings } = setUp(2 * KB);
    const logger: BundleCacheLogger = { warn: (_details, message) => warnings.push(message) };
    const other = new BundleCache(blobs, dir, { maxBytes: 2 * KB, logger });
    const bundles = await Promise.all([...'abcdefghij'].map((n) => upload(blobs, n, KB)));
    const paths = await Promise.all(bundles.map((x, i) => (i % 2 ? other : cache).fetch(x.key, x.sha256)));
    expect(paths).toHaveLength(10);
    expect(warnings).toEqual([]);
    const a = bundles[0]!;
    rmSync(join(dir, `${a.sha256}.js`), { force: true });
    await expect(cache.fetch(a.key, a.sha256)).resolves.toMatch(/\.js$/);
    expect(cached()).toContain(`${a.sha256}.js`);
  });
});

import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { BlobNotFoundError, createBlobStore, type BlobStore } from '@weir/blob';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from './support/control-plane';

const MiB = 1024 * 1024;

/** Deterministic bytes produced chunk by chunk, so the test never holds the whole object in memory. */
function generated(totalBytes: number, seed: number): { stream: Readable; sha256: Promise<string> } {
  const hash = createHash('sha256');
  let sent = 0;
  let resolveHash!: (h: string) => void;
  const sha256 = new Promise<string>((r) => (resolveHash = r));
  const stream = new Readable({
    read() {
      if (sent >= totalBytes) {
        resolveHash(hash.digest('hex'));
        this.push(null);
        return;
      }
      const chunk = Buffer.alloc(Math.min(256 * 1024, totalBytes - sent), (sent / 1024 + seed) & 0xff);
      sent += chunk.length;
      hash.update(chunk);
      this.push(chunk);
    },
  });
  return { stream, sha256 };
}

async function sha256Of(stream: Readable): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

describe('S3 blob store', () => {
  const config = testConfig();
  const prefix = `test/blob-${randomBytes(4).toString('hex')}/`;
  let store: BlobStore;

  beforeAll(async () => {
    store = createBlobStore(config, { partSize: 5 * MiB });
    await store.ensureBucket();
    await store.ensureBucket();
  });
  afterAll(async () => {
    for await (const blob of store.list(prefix)) await store.delete(blob.key);
    store.close();
  });

  it('streams a multipart object in and out unchanged', async () => {
    const size = 11 * MiB + 123;
    const { stream, sha256 } = generated(size, 7);
    const put = await store.put(`${prefix}big.bin`, stream, { contentType: 'application/octet-stream' });
    expect(put.key).toBe(`${prefix}big.bin`);
    const head = await store.head(`${prefix}big.bin`);
    expect(head?.size).toBe(size);
    const back = await sha256Of(await store.get(`${prefix}big.bin`));
    expect(back).toEqual({ sha256: await sha256, bytes: size });
  });

  it('lists by prefix in key order, and stops at a limit', async () => {
    const keys = ['list/a', 'list/b', 'list/c', 'other/d'].map((k) => `${prefix}${k}`);
    for (const key of keys) await store.put(key, `body of ${key}`);
    const listed: string[] = [];
    for await (const blob of store.list(`${prefix}list/`)) listed.push(blob.key);
    expect(listed).toEqual(keys.slice(0, 3));
    const limited: string[] = [];
    for await (const blob of store.list(`${prefix}list/`, { limit: 2 })) limited.push(blob.key);
    expect(limited).toEqual(keys.slice(0, 2));
  });

  it('reports absence: head is null, get throws BlobNotFoundError, delete is idempotent', async () => {
    const key = `${prefix}gone.txt`;
    await store.put(key, 'soon gone');
    await store.delete(key);
    await store.delete(key);
    expect(await store.head(key)).toBeNull();
    await expect(store.get(key)).rejects.toBeInstanceOf(BlobNotFoundError);
  });

  it('copies inside the store: the copy reads back the same bytes, and the source stays', async () => {
    const size = 6 * MiB + 5;
    const { stream, sha256 } = generated(size, 3);
    // A multipart source, and keys that need URL-encoding as a copy source (a space, non-ASCII).
    const from = `${prefix}copy/sourcé file.bin`;
    const to = `${prefix}copy/copied ü.bin`;
    await store.put(from, stream);
    const copy = await store.copy(from, to, { contentType: 'application/javascript', metadata: { sha256: await sha256 } });
    expect(copy.key).toBe(to);
    // s3rver computes no checksums; a store that does reports the copy's own.
    if (copy.sha256 !== undefined) expect(copy.sha256).toBe(await sha256);
    expect((await store.head(to))?.size).toBe(size);
    expect(await sha256Of(await store.get(to))).toEqual({ sha256: await sha256, bytes: size });
    expect((await store.head(from))?.size).toBe(size);
  });

  it('refuses to copy an absent object with BlobNotFoundError naming the source, and writes nothing', async () => {
    const from = `${prefix}copy/missing.bin`;
    const to = `${prefix}copy/never.bin`;
    const err = await store.copy(from, to).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlobNotFoundError);
    expect(err).toMatchObject({ key: from });
    expect(await store.head(to)).toBeNull();
  });

  it('probes the bucket', async () => {
    await expect(store.probe()).resolves.toBeUndefined();
  });
});

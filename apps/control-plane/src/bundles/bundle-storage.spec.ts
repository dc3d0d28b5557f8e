import { createHash } from 'node:crypto';
import { BlobNotFoundError, BlobStoreError, type BlobInfo, type BlobStore, type CopyOptions, type CopyResult } from '@weir/blob';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { BundleIntegrityError, BundleStorage, type StoredObject } from './bundle-storage';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const md5Etag = (bytes: Buffer) => `"${createHash('md5').update(bytes).digest('hex')}"`;

/** Only what promote uses; `onCopy` plays the server: what it stores and what it reports. */
function fakeStore(onCopy: (bytes: Buffer) => { bytes: Buffer; etag: string; sha256?: string } | Error) {
  const objects = new Map<string, { bytes: Buffer; etag: string }>();
  const store = {
    async copy(fromKey: string, toKey: string, _options?: CopyOptions): Promise<CopyResult> {
      const source = objects.get(fromKey);
      if (!source) throw new BlobNotFoundError('b', fromKey);
      const copied = onCopy(source.bytes);
      if (copied instanceof Error) {
        objects.set(toKey, { bytes: Buffer.alloc(0), etag: '"partial"' });
        throw copied;
      }
      objects.set(toKey, copied);
      return { key: toKey, etag: copied.etag, sha256: copied.sha256 };
    },
    async head(key: string): Promise<BlobInfo | null> {
      const o = objects.get(key);
      return o ? { key, size: o.bytes.length, lastModified: undefined, etag: o.etag } : null;
    },
    async delete(key: string): Promise<void> {
      objects.delete(key);
    },
  };
  return { objects, storage: new BundleStorage(store as unknown as BlobStore, pino({ level: 'silent' })) };
}

function staged(objects: Map<string, { bytes: Buffer; etag: string }>, bytes: Buffer, etag = md5Etag(bytes)): StoredObject {
  objects.set('staging', { bytes, etag });
  return { key: 'staging', sha256: sha256(bytes), sizeBytes: bytes.length, etag };
}

const code = Buffer.from('module.exports = 42;');

describe('BundleStorage.promote', () => {
  it('keeps a copy whose SHA-256, as the store computed it, is the uploaded one', async () => {
    const { objects, storage } = fakeStore((bytes) => ({ bytes, etag: md5Etag(bytes), sha256: sha256(bytes) }));
    await storage.promote(staged(objects, code), 'final');
    expect(objects.get('final')?.bytes.equals(code)).toBe(true);
  });

  it('refuses and removes a copy whose store-computed SHA-256 differs', async () => {
    const corrupt = Buffer.from('module.exports = 43;');
    const { objects, storage } = fakeStore(() => ({ bytes: corrupt, etag: md5Etag(code), sha256: sha256(corrupt) }));
    await expect(storage.promote(staged(objects, code), 'final')).rejects.toBeInstanceOf(BundleIntegrityError);
    expect(objects.has('final')).toBe(false);
  });

  it('without a store checksum (s3rver), refuses and removes a copy of another size or another MD5 ETag', async () => {
    const short = fakeStore((bytes) => ({ bytes: bytes.subarray(1), etag: md5Etag(bytes) }));
    await expect(short.storage.promote(staged(short.objects, code), 'final')).rejects.toBeInstanceOf(BundleIntegrityError);
    expect(short.objects.has('final')).toBe(false);
    const other = Buffer.from('module.exports = 43;');
    const wrong = fakeStore(() => ({ bytes: other, etag: md5Etag(other) }));
    await expect(wrong.storage.promote(staged(wrong.objects, code), 'final')).rejects.toBeInstanceOf(BundleIntegrityError);
    expect(wrong.objects.has('final')).toBe(false);
  });

  it('without a store checksum, keeps a same-size copy whose MD5 ETag replaces a multipart one', async () => {
    const { objects, storage } = fakeStore((bytes) => ({ bytes, etag: md5Etag(bytes) }));
    await storage.promote(staged(objects, code, '"0123456789abcdef0123456789abcdef-2"'), 'final');
    expect(objects.has('final')).toBe(true);
  });

  it('removes the destination when the copy fails, and throws the copy error', async () => {
    const failure = new BlobStoreError('copy s3://b/staging to final: InternalError: HTTP 500');
    const { objects, storage } = fakeStore(() => failure);
    await expect(storage.promote(staged(objects, code), 'final')).rejects.toBe(failure);
    expect(objects.has('final')).toBe(false);
  });
});

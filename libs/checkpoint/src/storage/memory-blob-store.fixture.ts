import { Readable } from 'node:stream';
import { BlobNotFoundError, type BlobInfo, type BlobStore, type CopyResult, type PutResult } from '@weir/blob';

/** An in-memory BlobStore for specs: records the order of puts and deletes. */
export class MemoryBlobStore implements BlobStore {
  readonly bucket = 'memory';
  readonly objects = new Map<string, { bytes: Buffer; lastModified: Date }>();
  readonly log: string[] = [];
  failPutsMatching?: RegExp;

  async put(key: string, body: Readable | Uint8Array | string): Promise<PutResult> {
    if (this.failPutsMatching?.test(key)) throw new Error(`injected failure putting ${key}`);
    let bytes: Buffer;
    if (typeof body === 'string') bytes = Buffer.from(body);
    else if (body instanceof Uint8Array) bytes = Buffer.from(body);
    else {
      const chunks: Buffer[] = [];
      for await (const chunk of body) chunks.push(chunk as Buffer);
      bytes = Buffer.concat(chunks);
    }
    this.objects.set(key, { bytes, lastModified: new Date() });
    this.log.push(`put ${key}`);
    return { key, etag: undefined };
  }

  async get(key: string): Promise<Readable> {
    const object = this.objects.get(key);
    if (!object) throw new BlobNotFoundError(this.bucket, key);
    return Readable.from([object.bytes]);
  }

  async head(key: string): Promise<BlobInfo | null> {
    const object = this.objects.get(key);
    return object ? { key, size: object.bytes.length, lastModified: object.lastModified, etag: undefined } : null;
  }

  async copy(fromKey: string, toKey: string): Promise<CopyResult> {
    const object = this.objects.get(fromKey);
    if (!object) throw new BlobNotFoundError(this.bucket, fromKey);
    this.objects.set(toKey, { bytes: object.bytes, lastModified: new Date() });
    return { key: toKey, etag: undefined, sha256: undefined };
  }

  async delete(key: string): Promise<void> {
    this.objects.delete(key);
    this.log.push(`delete ${key}`);
  }

  async *list(prefix: string): AsyncIterable<BlobInfo> {
    for (const key of [...this.objects.keys()].sort()) {
      if (!key.startsWith(prefix)) continue;
      const object = this.objects.get(key)!;
      yield { key, size: object.bytes.length, lastModified: object.lastModified, etag: undefined };
    }
  }

  async ensureBucket(): Promise<void> {}
  async probe(): Promise<void> {}
  close(): void {}
}

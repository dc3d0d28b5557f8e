import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '@weir/blob';

export class BundleIntegrityError extends Error {
  override readonly name = 'BundleIntegrityError';
}

/**
 * Bundles fetched from the blob store onto local disk, keyed by content hash: a bundle is downloaded once per
 * worker, verified against the sha256 the control plane recorded at upload, and never modified afterwards.
 */
export class BundleCache {
  constructor(
    private readonly blobs: BlobStore,
    private readonly dir: string,
  ) {}

  async fetch(key: string, sha256: string): Promise<string> {
    const path = join(this.dir, `${sha256}.js`);
    if (await exists(path)) return path;
    await mkdir(this.dir, { recursive: true });
    const partial = `${path}.${process.pid}.partial`;
    const hash = createHash('sha256');
    const hashing = new Transform({
      transform(chunk, _enc, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(await this.blobs.get(key), hashing, createWriteStream(partial));
      const actual = hash.digest('hex');
      if (actual !== sha256) {
        throw new BundleIntegrityError(`bundle ${key} has sha256 ${actual}, expected ${sha256}: refusing to run it`);
      }
      await rename(partial, path);
      return path;
    } finally {
      await rm(partial, { force: true });
    }
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

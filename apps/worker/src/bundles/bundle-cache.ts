import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '@weir/blob';
import { chooseEvictions, type CachedBundle } from './bundle-eviction';

export class BundleIntegrityError extends Error {
  override readonly name = 'BundleIntegrityError';
}

/** A download older than this is one a crashed process left behind, not one in progress. */
const STALE_PARTIAL_MS = 60 * 60 * 1000;

export interface BundleCacheLogger {
  warn(details: object, message: string): void;
}

export interface BundleCacheOptions {
  /** The bundles kept on disk add up to at most this (bar those in use); the least recently used go first. */
  readonly maxBytes: number;
  /**
   * The sha256 of every bundle a job on this worker runs or is starting with: never evicted. A callback, so that
   * the cache knows nothing of jobs (the supervisor, which uses the cache, answers).
   */
  readonly inUse?: () => ReadonlySet<string>;
  readonly logger?: BundleCacheLogger;
}

/**
 * Bundles fetched from the blob store onto local disk, keyed by content hash: a bundle is downloaded once per
 * worker, verified against the sha256 the control plane recorded at upload, and never modified afterwards. The
 * cache is bounded: a hit refreshes the file's mtime, so recency survives a restart, and each download evicts
 * the least recently used bundles past `maxBytes`. An evicted bundle is simply downloaded again when next needed.
 */
export class BundleCache {
  /** Bundles whose fetch is under way in this process, by sha256: eviction leaves them alone. */
  private readonly fetching = new Map<string, number>();
  private readonly downloads = new Map<string, Promise<void>>();
  /** Evictions run one at a time, so that two downloads finishing together do not each evict for the other. */
  private evicting: Promise<void> = Promise.resolve();
  private readonly warnedOversized = new Set<string>();

  constructor(
    private readonly blobs: BlobStore,
    private readonly dir: string,
    private readonly options: BundleCacheOptions,
  ) {}

  async fetch(key: string, sha256: string): Promise<string> {
    const path = join(this.dir, `${sha256}.js`);
    this.fetching.set(sha256, (this.fetching.get(sha256) ?? 0) + 1);
    try {
      if (await this.touch(path)) return path;
      // One download per bundle at a time: two would share this process's partial file.
      let download = this.downloads.get(sha256);
      if (!download) {
        download = this.download(key, sha256, path).finally(() => this.downloads.delete(sha256));
        this.downloads.set(sha256, download);
        await download;
        this.evicting = this.evicting.then(() => this.evict(sha256));
        await this.evicting;
      } else {
        await download;
      }
      return path;
    } finally {
      const left = this.fetching.get(sha256)! - 1;
      if (left) this.fetching.set(sha256, left);
      else this.fetching.delete(sha256);
    }
  }

  /** Marks a cached bundle as just used; false when it is not (or no longer) there. */
  private async touch(path: string): Promise<boolean> {
    const now = new Date();
    try {
      await utimes(path, now, now);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      // The bundle is there but its recency is not refreshed: it may be evicted sooner, which only costs a download.
      this.options.logger?.warn({ path, err: (err as Error).message }, 'could not refresh a cached bundle');
      return true;
    }
  }

  private async download(key: string, sha256: string, path: string): Promise<void> {
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
    } finally {
      await rm(partial, { force: true });
    }
  }

  /**
   * Deletes least recently used bundles until the cache fits, and downloads a crash left behind. Never fails:
   * files may vanish under it (another process, a concurrent eviction), and a fetch must not fail for housekeeping.
   */
  private async evict(justFetched: string): Promise<void> {
    try {
      const files: CachedBundle[] = [];
      for (const name of await readdir(this.dir)) {
        const info = await stat(join(this.dir, name)).catch(() => undefined);
        if (!info?.isFile()) continue;
        if (name.endsWith('.js')) files.push({ name, size: info.size, mtimeMs: info.mtimeMs });
        else if (name.endsWith('.partial') && Date.now() - info.mtimeMs > STALE_PARTIAL_MS) await this.remove(name);
      }
      const fetched = files.find((f) => f.name === `${justFetched}.js`);
      if (fetched && fetched.size > this.options.maxBytes && !this.warnedOversized.has(justFetched)) {
        this.warnedOversized.add(justFetched);
        this.options.logger?.warn(
          { sha256: justFetched, bytes: fetched.size, maxBytes: this.options.maxBytes },
          'bundle is larger than WEIR_WORKER_BUNDLE_CACHE_BYTES: kept, the cache runs over its cap',
        );
      }
      const { maxBytes } = this.options;
      const victims = chooseEvictions({ files, inUse: this.protectedNames(), justFetched: `${justFetched}.js`, maxBytes });
      for (const name of victims) {
        // Asked again just before each delete: a job may have started with this bundle since the listing.
        if (!this.protectedNames().has(name)) await this.remove(name);
      }
    } catch (err) {
      this.options.logger?.warn({ dir: this.dir, err: (err as Error).message }, 'bundle cache eviction failed');
    }
  }

  private protectedNames(): Set<string> {
    const shas = [...(this.options.inUse?.() ?? []), ...this.fetching.keys()];
    return new Set(shas.map((sha256) => `${sha256}.js`));
  }

  private async remove(name: string): Promise<void> {
    try {
      await rm(join(this.dir, name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // gone already: what we wanted
      this.options.logger?.warn({ file: name, err: (err as Error).message }, 'could not evict a cached bundle');
    }
  }
}

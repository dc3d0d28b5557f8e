import type { Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import type { BlobStore } from '@weir/blob';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../control-plane-options';
import { BLOB_STORE } from '../infrastructure/tokens';
import { DigestingLimiter, SizeLimitExceededError } from './digesting-limiter';

export interface StoredObject {
  readonly key: string;
  readonly sha256: string;
  readonly sizeBytes: number;
}

/** The stored copy does not hash to what was uploaded: S3 returned other bytes. Never expected. */
export class BundleIntegrityError extends Error {
  override readonly name = 'BundleIntegrityError';
}

const CONTENT_TYPE = 'application/javascript';

/**
 * Bundle bytes on S3. An upload is streamed to a staging key while hashed and counted (its final key contains the
 * hash, unknown until the end), then copied to the final key by streaming it back through the control plane (the
 * blob store has no server-side copy; bundles are at most maxBundleBytes) and re-hashed on the way, so the final
 * object is verified. Every failure removes what it wrote.
 */
@Injectable()
export class BundleStorage {
  constructor(
    @Inject(BLOB_STORE) private readonly blob: BlobStore,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {}

  /** Streams `file` to `key`; SizeLimitExceededError once more than `limit` bytes have arrived. */
  async stage(file: Readable, key: string, limit: number, signal: AbortSignal): Promise<StoredObject> {
    if (signal.aborted) {
      file.resume();
      throw signal.reason instanceof Error ? signal.reason : new Error('upload aborted');
    }
    const limiter = new DigestingLimiter(limit);
    let failure: Error | undefined;
    limiter.on('error', (err) => (failure ??= err));
    file.on('error', (err) => limiter.destroy(err));
    // The request failed elsewhere (a bad part after this one, the client gone): stop reading at once.
    const stop = () => limiter.destroy(signal.reason instanceof Error ? signal.reason : new Error('upload aborted'));
    signal.addEventListener('abort', stop, { once: true });
    file.pipe(limiter);
    try {
      await this.blob.put(key, limiter, { contentType: CONTENT_TYPE, signal });
      if (failure) throw failure;
      if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('upload aborted');
    } catch (err) {
      file.unpipe(limiter);
      file.resume();
      await this.remove(key);
      throw failure instanceof SizeLimitExceededError ? failure : err;
    } finally {
      signal.removeEventListener('abort', stop);
    }
    return { key, sha256: limiter.digest(), sizeBytes: limiter.bytes };
  }

  /** Copies `from` to `to`, verifying the copy hashes to `sha256`; removes `to` when anything fails. */
  async promote(from: string, to: string, sha256: string, sizeBytes: number): Promise<void> {
    try {
      const source = await this.blob.get(from);
      const limiter = new DigestingLimiter(sizeBytes);
      source.on('error', (err) => limiter.destroy(err));
      source.pipe(limiter);
      await this.blob.put(to, limiter, { contentType: CONTENT_TYPE, metadata: { sha256 } });
      const copied = limiter.digest();
      if (copied !== sha256 || limiter.bytes !== sizeBytes) {
        throw new BundleIntegrityError(`copy of ${from} hashed to ${copied} (${limiter.bytes} bytes), expected ${sha256} (${sizeBytes})`);
      }
    } catch (err) {
      await this.remove(to);
      throw err;
    }
  }

  /** Best effort: a failure is logged (the key says what to clean up) and not thrown over the original error. */
  async remove(key: string): Promise<void> {
    try {
      await this.blob.delete(key);
    } catch (err) {
      this.logger.error({ key, err: { name: (err as Error).name, message: (err as Error).message } }, 'could not delete bundle object; remove it by hand');
    }
  }
}

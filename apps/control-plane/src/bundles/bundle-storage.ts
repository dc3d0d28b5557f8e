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
  /** The staged object's ETag, as the put returned it. */
  readonly etag: string | undefined;
}

/** The stored copy is not what was uploaded: S3 copied other bytes, or only some. Never expected. */
export class BundleIntegrityError extends Error {
  override readonly name = 'BundleIntegrityError';
}

const CONTENT_TYPE = 'application/javascript';

/** An ETag that is an MD5 of the bytes, not a multipart one (`<md5 of part md5s>-<parts>`). */
const MD5_ETAG = /^"?[0-9a-f]{32}"?$/i;
const unquoted = (etag: string) => etag.replace(/"/g, '').toLowerCase();

/**
 * Bundle bytes on S3. An upload is streamed to a staging key while hashed and counted (its final key contains the
 * hash, unknown until the end), then copied to the final key inside S3 (the bytes cross the control plane once)
 * and the copy verified. Every failure removes what it wrote.
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
    let etag: string | undefined;
    try {
      ({ etag } = await this.blob.put(key, limiter, { contentType: CONTENT_TYPE, signal }));
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
    return { key, sha256: limiter.digest(), sizeBytes: limiter.bytes, etag };
  }

  /** The staged bytes, read back for the bundle check (at most `staged.sizeBytes`, which the upload already bounded). */
  async readStaged(staged: StoredObject): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of await this.blob.get(staged.key)) {
      bytes += (chunk as Buffer).length;
      if (bytes > staged.sizeBytes) throw new BundleIntegrityError(`the staged bundle ${staged.key} is longer than the ${staged.sizeBytes} bytes uploaded`);
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks);
  }

  /**
   * Copies `staged` to `to` inside S3 and verifies the copy; removes `to` when anything fails. AWS S3 reports the
   * SHA-256 of the bytes it wrote (the copy asks for it): it must be the hash taken on the way in, which checks the
   * copy end to end, as reading it back would. s3rver computes no checksums: there the copy must have the staged
   * object's size and ETag (s3rver carries the ETag over), which catches a missing, short or wrong copy but not
   * changed bytes. That suffices for the local server, reached over loopback: the worker re-hashes every bundle
   * against the recorded sha256 before running it (BundleCache), so changed bytes fail a start and never run.
   */
  async promote(staged: StoredObject, to: string): Promise<void> {
    try {
      const copy = await this.blob.copy(staged.key, to, { contentType: CONTENT_TYPE, metadata: { sha256: staged.sha256 } });
      if (copy.sha256 !== undefined) {
        if (copy.sha256 !== staged.sha256) throw new BundleIntegrityError(`copy of ${staged.key} has sha256 ${copy.sha256}, expected ${staged.sha256}`);
        return;
      }
      const info = await this.blob.head(to);
      // A multipart ETag is not compared: a copy made in one request gets an MD5 one instead.
      const etagDiffers = info?.etag && staged.etag && MD5_ETAG.test(info.etag) && MD5_ETAG.test(staged.etag) && unquoted(info.etag) !== unquoted(staged.etag);
      if (!info || info.size !== staged.sizeBytes || etagDiffers) {
        throw new BundleIntegrityError(`copy of ${staged.key} is ${info ? `${info.size} bytes, ETag ${info.etag}` : 'missing'}; expected ${staged.sizeBytes} bytes, ETag ${staged.etag}`);
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

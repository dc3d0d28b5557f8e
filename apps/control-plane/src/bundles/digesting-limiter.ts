import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

export class SizeLimitExceededError extends Error {
  override readonly name = 'SizeLimitExceededError';
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes`);
  }
}

/**
 * Passes bytes through while computing their sha256 and counting them; errors (SizeLimitExceededError) as soon as
 * the count passes `limit`, so an oversized upload is cut off at the limit rather than read to its end.
 */
export class DigestingLimiter extends Transform {
  private readonly hash: Hash = createHash('sha256');
  private count = 0;

  constructor(private readonly limit: number) {
    super();
  }

  get bytes(): number {
    return this.count;
  }

  /** Hex sha256 of everything passed through; call once the stream has ended. */
  digest(): string {
    return this.hash.digest('hex');
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.count += chunk.length;
    if (this.count > this.limit) {
      callback(new SizeLimitExceededError(this.limit));
      return;
    }
    this.hash.update(chunk);
    callback(null, chunk);
  }
}

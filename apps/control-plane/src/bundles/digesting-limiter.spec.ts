import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { DigestingLimiter, SizeLimitExceededError } from './digesting-limiter';

async function drain(chunks: Buffer[], limit: number): Promise<DigestingLimiter> {
  const limiter = new DigestingLimiter(limit);
  await pipeline(Readable.from(chunks), limiter, async (source: AsyncIterable<Buffer>) => {
    for await (const _chunk of source) void _chunk;
  });
  return limiter;
}

describe('DigestingLimiter', () => {
  it('hashes and counts what passes, up to the limit inclusive', async () => {
    const chunks = [Buffer.from('hello '), Buffer.from('world')];
    const limiter = await drain(chunks, 11);
    expect(limiter.bytes).toBe(11);
    expect(limiter.digest()).toBe(createHash('sha256').update('hello world').digest('hex'));
  });

  it('fails as soon as the limit is passed', async () => {
    await expect(drain([Buffer.alloc(10), Buffer.alloc(2), Buffer.alloc(1000)], 11)).rejects.toBeInstanceOf(SizeLimitExceededError);
  });
});

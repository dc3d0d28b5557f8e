import type { Readable } from 'node:stream';
import type { BlobStore } from '@weir/blob';

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function getBytes(blob: BlobStore, key: string): Promise<Buffer> {
  return readAll(await blob.get(key));
}

/**
 * The messages of the blob broker: a job host's object-store calls, carried over its IPC channel to the worker,
 * which makes them with its own credentials (blob-broker.ts), and the answers. Bodies travel in chunks of at most
 * CHUNK_BYTES (the channel's advanced serialization carries bytes as they are).
 */
import type { BlobInfo, CopyOptions, CopyResult, PutResult } from '@weir/blob';

export const CHUNK_BYTES = 1024 * 1024;

/** A piece of a body as read from a stream, in chunks of at most CHUNK_BYTES (views, not copies). */
export function* wireChunks(piece: unknown): Generator<Uint8Array> {
  const bytes = typeof piece === 'string' ? Buffer.from(piece) : (piece as Buffer);
  for (let at = 0; at < bytes.length; at += CHUNK_BYTES) yield bytes.subarray(at, at + CHUNK_BYTES);
}

export interface PutMeta {
  readonly contentType?: string;
  readonly metadata?: Readonly<Record<string, string>>;
}

export type BlobCall =
  /** `bytes`: the whole body; absent, `blob-put-chunk`s follow, then `blob-put-end`. */
  | { readonly op: 'put'; readonly key: string; readonly options: PutMeta; readonly bytes?: Uint8Array }
  | { readonly op: 'get'; readonly key: string }
  | { readonly op: 'head'; readonly key: string }
  | { readonly op: 'copy'; readonly fromKey: string; readonly toKey: string; readonly options: CopyOptions }
  | { readonly op: 'delete'; readonly key: string }
  | { readonly op: 'list'; readonly prefix: string; readonly limit?: number };

/** From the job host. */
export type BlobRequest =
  | ({ readonly type: 'blob'; readonly id: number } & BlobCall)
  | { readonly type: 'blob-put-chunk'; readonly id: number; readonly chunk: Uint8Array }
  | { readonly type: 'blob-put-end'; readonly id: number }
  | { readonly type: 'blob-abort'; readonly id: number };

export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly bucket?: string;
  readonly key?: string;
}

/** What each call answers (a get's body follows its answer as `blob-chunk`s and a `blob-end`). */
export type BlobValue = PutResult | BlobInfo | null | CopyResult | readonly BlobInfo[] | undefined;

/** From the worker. */
export type BlobReply =
  | { readonly type: 'blob-reply'; readonly id: number; readonly ok: true; readonly value: BlobValue }
  | { readonly type: 'blob-reply'; readonly id: number; readonly ok: false; readonly error: WireError }
  | { readonly type: 'blob-chunk'; readonly id: number; readonly chunk: Uint8Array }
  | { readonly type: 'blob-end'; readonly id: number; readonly error?: WireError };

export function isBlobRequest(message: { readonly type: string }): message is BlobRequest {
  return message.type === 'blob' || message.type === 'blob-put-chunk' || message.type === 'blob-put-end' || message.type === 'blob-abort';
}

export function isBlobReply(message: { readonly type: string }): message is BlobReply {
  return message.type === 'blob-reply' || message.type === 'blob-chunk' || message.type === 'blob-end';
}

import type { Readable } from 'node:stream';

/** What a listing or a head returns about one object. */
export interface BlobInfo {
  readonly key: string;
  readonly size: number;
  readonly lastModified: Date | undefined;
  readonly etag: string | undefined;
}

export interface PutOptions {
  readonly contentType?: string;
  /** User metadata stored with the object (x-amz-meta-*). */
  readonly metadata?: Readonly<Record<string, string>>;
  /** Aborting stops the upload and removes the parts already sent. */
  readonly signal?: AbortSignal;
}

export interface PutResult {
  readonly key: string;
  readonly etag: string | undefined;
}

export interface ListOptions {
  /** Stop after this many keys (default: all). */
  readonly limit?: number;
}

/**
 * Weir's face on object storage: bundles, checkpoints and savepoints go through it. Keys are plain strings; the
 * caller owns their layout (tenant prefixes and so on). Every call speaks S3 through the AWS SDK, so AWS S3,
 * MinIO and the local s3rver all work by configuration.
 */
export interface BlobStore {
  readonly bucket: string;
  /** Streams `body` to `key` (multipart for large bodies, so nothing is held whole in memory). */
  put(key: string, body: Readable | Uint8Array | string, options?: PutOptions): Promise<PutResult>;
  /** The object's bytes as a stream; throws BlobNotFoundError when it is absent. */
  get(key: string, options?: { signal?: AbortSignal }): Promise<Readable>;
  /** The object's size and etag, or null when it is absent. */
  head(key: string, options?: { signal?: AbortSignal }): Promise<BlobInfo | null>;
  /** Removes the object; removing an absent object succeeds. */
  delete(key: string): Promise<void>;
  /** Every object whose key starts with `prefix`, in key order, fetched page by page. */
  list(prefix: string, options?: ListOptions): AsyncIterable<BlobInfo>;
  /** Creates the bucket unless it exists. */
  ensureBucket(): Promise<void>;
  /** HeadBucket: resolves when the store answers and the bucket is reachable (health checks). */
  probe(options?: { signal?: AbortSignal }): Promise<void>;
  /** Releases the SDK's sockets. */
  close(): void;
}

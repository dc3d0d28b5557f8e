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

export interface CopyOptions {
  /** Either one replaces both of the source's (S3's REPLACE directive); with neither, the copy keeps the source's. */
  readonly contentType?: string;
  readonly metadata?: Readonly<Record<string, string>>;
}

export interface CopyResult {
  readonly key: string;
  readonly etag: string | undefined;
  /**
   * Hex SHA-256 of the copy, computed by the store from the bytes it wrote (AWS S3 does); undefined when the store
   * computes no checksums (s3rver) or reports only a checksum of part checksums.
   */
  readonly sha256: string | undefined;
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
  /**
   * Copies `fromKey` to `toKey` inside the store (one CopyObject: no byte passes through this process); throws
   * BlobNotFoundError when the source is absent. At most 5 GiB, S3's limit for one CopyObject: S3 refuses a larger
   * source (BlobStoreError). Larger copies would need UploadPartCopy, which s3rver does not implement.
   */
  copy(fromKey: string, toKey: string, options?: CopyOptions): Promise<CopyResult>;
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

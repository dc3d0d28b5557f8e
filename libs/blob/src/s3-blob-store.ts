import type { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { WeirConfig } from '@weir/config';
import type { BlobInfo, BlobStore, CopyOptions, CopyResult, ListOptions, PutOptions, PutResult } from './contract';
import { BlobNotFoundError, isNotFound, toBlobStoreError } from './errors';

export type S3Config = Pick<
  WeirConfig,
  | 'WEIR_S3_ENDPOINT'
  | 'WEIR_S3_REGION'
  | 'WEIR_S3_BUCKET'
  | 'WEIR_S3_ACCESS_KEY_ID'
  | 'WEIR_S3_SECRET_ACCESS_KEY'
  | 'WEIR_S3_FORCE_PATH_STYLE'
>;

export interface BlobStoreOptions {
  /** SDK attempts per call (default 3). Health probes use 1 so that their timeout measures one try. */
  readonly maxAttempts?: number;
  /** Multipart part size in bytes (S3's minimum is 5 MiB). */
  readonly partSize?: number;
  /** Parts uploaded in parallel per put. */
  readonly queueSize?: number;
}

const LIST_PAGE = 1000;

/**
 * S3 wants the copy source URL-encoded (the SDK sends it as given); segment by segment, so the slashes stay.
 * s3rver decodes it with decodeURI, which leaves %2B, %3D, %26 and the like encoded: there a source key with
 * `+ = & $ , ; : @ # ?` is not found. AWS S3 and MinIO need those encoded (a bare `+` reads as a space).
 */
function copySource(bucket: string, key: string): string {
  return `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
}

/** A full-object SHA-256 as hex; a composite one (a checksum of part checksums, suffixed `-<parts>`) is not one. */
function fullObjectSha256(checksum: string | undefined, type: string | undefined): string | undefined {
  if (checksum === undefined || type === 'COMPOSITE' || !/^[A-Za-z0-9+/]{43}=$/.test(checksum)) return undefined;
  return Buffer.from(checksum, 'base64').toString('hex');
}

export function createBlobStore(config: S3Config, options: BlobStoreOptions = {}): BlobStore {
  const client = new S3Client({
    endpoint: config.WEIR_S3_ENDPOINT ?? undefined,
    region: config.WEIR_S3_REGION,
    forcePathStyle: config.WEIR_S3_FORCE_PATH_STYLE,
    credentials: { accessKeyId: config.WEIR_S3_ACCESS_KEY_ID, secretAccessKey: config.WEIR_S3_SECRET_ACCESS_KEY },
    maxAttempts: options.maxAttempts ?? 3,
  });
  return new S3BlobStore(client, config.WEIR_S3_BUCKET, options);
}

class S3BlobStore implements BlobStore {
  constructor(
    private readonly client: S3Client,
    readonly bucket: string,
    private readonly options: BlobStoreOptions,
  ) {}

  async put(key: string, body: Readable | Uint8Array | string, options: PutOptions = {}): Promise<PutResult> {
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentType: options.contentType,
        Metadata: options.metadata ? { ...options.metadata } : undefined,
      },
      partSize: this.options.partSize ?? 8 * 1024 * 1024,
      queueSize: this.options.queueSize ?? 4,
      leavePartsOnError: false,
    });
    const abort = () => void upload.abort().catch(() => undefined);
    options.signal?.addEventListener('abort', abort, { once: true });
    try {
      const result = await upload.done();
      return { key, etag: result.ETag };
    } catch (err) {
      throw toBlobStoreError(err, `put s3://${this.bucket}/${key}`);
    } finally {
      options.signal?.removeEventListener('abort', abort);
    }
  }

  async get(key: string, options: { signal?: AbortSignal } = {}): Promise<Readable> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }), {
        abortSignal: options.signal,
      });
      // In Node the SDK's body is an http.IncomingMessage, a Readable.
      return out.Body as Readable;
    } catch (err) {
      if (isNotFound(err)) throw new BlobNotFoundError(this.bucket, key, { cause: err });
      throw toBlobStoreError(err, `get s3://${this.bucket}/${key}`);
    }
  }

  async head(key: string, options: { signal?: AbortSignal } = {}): Promise<BlobInfo | null> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }), {
        abortSignal: options.signal,
      });
      return { key, size: out.ContentLength ?? 0, lastModified: out.LastModified, etag: out.ETag };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw toBlobStoreError(err, `head s3://${this.bucket}/${key}`);
    }
  }

  async copy(fromKey: string, toKey: string, options: CopyOptions = {}): Promise<CopyResult> {
    const replace = options.contentType !== undefined || options.metadata !== undefined;
    try {
      const out = await this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: toKey,
          CopySource: copySource(this.bucket, fromKey),
          // S3 reads every byte to copy them: asking for their SHA-256 lets the caller verify the copy without reading it.
          ChecksumAlgorithm: 'SHA256',
          MetadataDirective: replace ? 'REPLACE' : undefined,
          ContentType: options.contentType,
          Metadata: options.metadata ? { ...options.metadata } : undefined,
        }),
      );
      const result = out.CopyObjectResult;
      return { key: toKey, etag: result?.ETag, sha256: fullObjectSha256(result?.ChecksumSHA256, result?.ChecksumType) };
    } catch (err) {
      if (isNotFound(err)) throw new BlobNotFoundError(this.bucket, fromKey, { cause: err });
      throw toBlobStoreError(err, `copy s3://${this.bucket}/${fromKey} to ${toKey}`);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (err) {
      if (isNotFound(err)) return;
      throw toBlobStoreError(err, `delete s3://${this.bucket}/${key}`);
    }
  }

  async *list(prefix: string, options: ListOptions = {}): AsyncIterable<BlobInfo> {
    let remaining = options.limit ?? Number.POSITIVE_INFINITY;
    let token: string | undefined;
    do {
      let page;
      try {
        page = await this.client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: prefix,
            ContinuationToken: token,
            // Full pages even under a small limit: fewer round trips, and s3rver (the local S3) cannot build
            // continuation tokens under OpenSSL 3 unless run with --openssl-legacy-provider.
            MaxKeys: LIST_PAGE,
          }),
        );
      } catch (err) {
        throw toBlobStoreError(err, `list s3://${this.bucket}/${prefix}`);
      }
      for (const object of page.Contents ?? []) {
        if (remaining <= 0 || object.Key === undefined) continue;
        remaining--;
        yield { key: object.Key, size: object.Size ?? 0, lastModified: object.LastModified, etag: object.ETag };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token && remaining > 0);
  }

  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return;
    } catch (err) {
      if (!isNotFound(err)) throw toBlobStoreError(err, `head bucket ${this.bucket}`);
    }
    try {
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      const name = (err as { name?: string }).name;
      // Another process created it between our HEAD and our CREATE.
      if (name === 'BucketAlreadyOwnedByYou' || name === 'BucketAlreadyExists') return;
      throw toBlobStoreError(err, `create bucket ${this.bucket}`);
    }
  }

  async probe(options: { signal?: AbortSignal } = {}): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), { abortSignal: options.signal });
    } catch (err) {
      throw toBlobStoreError(err, `head bucket ${this.bucket}`);
    }
  }

  close(): void {
    this.client.destroy();
  }
}

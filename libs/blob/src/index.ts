export type { BlobInfo, BlobStore, CopyOptions, CopyResult, ListOptions, PutOptions, PutResult } from './contract';
export { createBlobStore, type BlobStoreOptions, type S3Config } from './s3-blob-store';
export { BlobNotFoundError, BlobStoreError } from './errors';

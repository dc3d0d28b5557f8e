/** Errors libs/blob raises at its boundary; `cause` keeps the SDK's error for the server-side log. */
export class BlobStoreError extends Error {
  override readonly name: string = 'BlobStoreError';
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
  }
}

export class BlobNotFoundError extends BlobStoreError {
  override readonly name = 'BlobNotFoundError';
  constructor(readonly bucket: string, readonly key: string, options: { cause?: unknown } = {}) {
    super(`s3://${bucket}/${key} does not exist`, options);
  }
}

interface SdkError {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

export function isNotFound(err: unknown): boolean {
  const e = err as SdkError;
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.name === 'NoSuchBucket' || e?.$metadata?.httpStatusCode === 404;
}

/** One readable line per SDK failure: some SDK errors (a bare 403 or 404 on HEAD) carry no message of their own. */
export function describeSdkError(err: unknown): string {
  const e = err as SdkError;
  const status = e?.$metadata?.httpStatusCode;
  const message = e?.message && e.message !== 'UnknownError' ? e.message : undefined;
  return [e?.name ?? 'Error', status ? `HTTP ${status}` : undefined, message].filter(Boolean).join(': ');
}

export function toBlobStoreError(err: unknown, what: string): BlobStoreError {
  if (err instanceof BlobStoreError) return err;
  return new BlobStoreError(`${what}: ${describeSdkError(err)}`, { cause: err });
}

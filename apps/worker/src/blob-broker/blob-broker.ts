/**
 * The worker's side of a job host's object store. A job host holds no S3 credentials and may not connect to S3
 * (outbound-guard.ts): its checkpoints, savepoints, restores and key-group moves reach S3 through here, and only
 * under its tenant's jobs (`tenants/<tenantId>/jobs/`), so tenant code that takes over the job host's client still
 * reads and writes nothing of another tenant's, nor the tenant's bundles. One broker per job host.
 */
import { PassThrough } from 'node:stream';
import { BlobNotFoundError, BlobStoreError, type BlobInfo, type BlobStore } from '@weir/blob';
import { CHUNK_BYTES, wireChunks, type BlobCall, type BlobReply, type BlobRequest, type BlobValue, type WireError } from './blob-wire';

/** A job host asked for an object outside its tenant's jobs. */
export class BlobAccessDeniedError extends BlobStoreError {
  override readonly name = 'BlobAccessDeniedError';
}

/** Where a tenant's job hosts may read and write: every job of the tenant (a restore may take another's savepoint). */
export function jobHostBlobPrefix(tenantId: string): string {
  return `tenants/${tenantId}/jobs/`;
}

type Send = (reply: BlobReply) => Promise<void>;

interface Upload {
  readonly body: PassThrough;
  readonly abort: AbortController;
}

export class BlobBroker {
  private readonly prefix: string;
  private readonly uploads = new Map<number, Upload>();
  private readonly downloads = new Map<number, AbortController>();
  private closed = false;

  constructor(
    private readonly blobs: BlobStore,
    tenantId: string,
    private readonly send: Send,
  ) {
    this.prefix = jobHostBlobPrefix(tenantId);
  }

  handle(request: BlobRequest): void {
    if (this.closed) return;
    switch (request.type) {
      case 'blob':
        void this.call(request.id, request);
        break;
      case 'blob-put-chunk':
        this.uploads.get(request.id)?.body.write(request.chunk);
        break;
      case 'blob-put-end':
        this.uploads.get(request.id)?.body.end();
        break;
      case 'blob-abort':
        this.abort(request.id);
        break;
    }
  }

  /** The job host is gone: what it had in flight is given up (an upload's parts are removed). */
  close(): void {
    this.closed = true;
    for (const id of [...this.uploads.keys(), ...this.downloads.keys()]) this.abort(id);
  }

  private abort(id: number): void {
    const upload = this.uploads.get(id);
    if (upload) {
      upload.abort.abort();
      upload.body.destroy(new BlobStoreError('the job host gave up the upload'));
      this.uploads.delete(id);
    }
    this.downloads.get(id)?.abort();
    this.downloads.delete(id);
  }

  private async call(id: number, call: BlobCall): Promise<void> {
    try {
      const value = await this.perform(id, call);
      if (call.op === 'get') {
        // The answer says it exists; the body follows.
        await this.reply({ type: 'blob-reply', id, ok: true, value: undefined });
        await this.stream(id, value as NodeJS.ReadableStream);
      } else await this.reply({ type: 'blob-reply', id, ok: true, value: value as BlobValue });
    } catch (err) {
      await this.reply({ type: 'blob-reply', id, ok: false, error: toWire(err) });
    } finally {
      this.uploads.delete(id);
    }
  }

  private async perform(id: number, call: BlobCall): Promise<BlobValue | NodeJS.ReadableStream> {
    switch (call.op) {
      case 'put': {
        this.allow(call.key);
        if (call.bytes) return await this.blobs.put(call.key, call.bytes, call.options);
        const upload = { body: new PassThrough({ highWaterMark: 4 * CHUNK_BYTES }), abort: new AbortController() };
        this.uploads.set(id, upload);
        return await this.blobs.put(call.key, upload.body, { ...call.options, signal: upload.abort.signal });
      }
      case 'get': {
        this.allow(call.key);
        const abort = new AbortController();
        this.downloads.set(id, abort);
        return await this.blobs.get(call.key, { signal: abort.signal });
      }
      case 'head':
        this.allow(call.key);
        return await this.blobs.head(call.key);
      case 'copy':
        this.allow(call.fromKey);
        this.allow(call.toKey);
        return await this.blobs.copy(call.fromKey, call.toKey, call.options);
      case 'delete':
        this.allow(call.key);
        await this.blobs.delete(call.key);
        return undefined;
      case 'list': {
        this.allow(call.prefix);
        const found: BlobInfo[] = [];
        for await (const info of this.blobs.list(call.prefix, call.limit === undefined ? {} : { limit: call.limit })) found.push(info);
        return found;
      }
    }
  }

  /** A get's body, chunk by chunk, each sent before the next is read. */
  private async stream(id: number, body: NodeJS.ReadableStream): Promise<void> {
    try {
      for await (const piece of body) for (const chunk of wireChunks(piece)) await this.reply({ type: 'blob-chunk', id, chunk });
      await this.reply({ type: 'blob-end', id });
    } catch (err) {
      await this.reply({ type: 'blob-end', id, error: toWire(err) });
    } finally {
      this.downloads.delete(id);
    }
  }

  private allow(key: string): void {
    // Keys are compared as given: S3 keys have no `..` resolution, so `tenants/a/jobs/../b` is a key of its own.
    if (!key.startsWith(this.prefix)) {
      throw new BlobAccessDeniedError(`a job may read and write only objects under ${this.prefix}, not ${key}`);
    }
  }

  private async reply(reply: BlobReply): Promise<void> {
    if (!this.closed) await this.send(reply);
  }
}

function toWire(err: unknown): WireError {
  if (err instanceof BlobNotFoundError) return { name: err.name, message: err.message, bucket: err.bucket, key: err.key };
  const e = err as Error;
  return { name: e?.name === 'BlobAccessDeniedError' || e?.name === 'BlobNotFoundError' ? e.name : 'BlobStoreError', message: e?.message ?? String(err) };
}

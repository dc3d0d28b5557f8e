/**
 * A job host's object store: every call goes over its IPC channel to the worker's BlobBroker, which makes it with the
 * worker's credentials and only under the tenant's jobs. The job host itself holds no S3 credentials and may not
 * connect to S3.
 */
import { Readable } from 'node:stream';
import { BlobNotFoundError, BlobStoreError, type BlobInfo, type BlobStore, type CopyOptions, type CopyResult, type PutOptions, type PutResult } from '@weir/blob';
import { BlobAccessDeniedError } from './blob-broker';
import { CHUNK_BYTES, wireChunks, type BlobCall, type BlobReply, type BlobRequest, type BlobValue, type WireError } from './blob-wire';

type Send = (request: BlobRequest) => Promise<void>;

interface Pending {
  resolve(value: BlobValue): void;
  reject(err: Error): void;
  /** A get's body, once its answer came. */
  body?: Readable;
}

export class BrokeredBlobStore implements BlobStore {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor(
    readonly bucket: string,
    private readonly send: Send,
  ) {}

  /** Every answer from the worker goes here (the job host's IPC handler routes them). */
  onReply(reply: BlobReply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    switch (reply.type) {
      case 'blob-reply':
        if (reply.ok) {
          // A get's body follows its answer: its entry stays until blob-end.
          if (!pending.body) this.pending.delete(reply.id);
          pending.resolve(reply.value);
        } else {
          this.pending.delete(reply.id);
          pending.reject(fromWire(reply.error));
        }
        break;
      case 'blob-chunk':
        pending.body?.push(Buffer.from(reply.chunk));
        break;
      case 'blob-end':
        this.pending.delete(reply.id);
        if (reply.error) pending.body?.destroy(fromWire(reply.error));
        else pending.body?.push(null);
        break;
    }
  }

  async put(key: string, body: Readable | Uint8Array | string, options: PutOptions = {}): Promise<PutResult> {
    const meta = { ...(options.contentType ? { contentType: options.contentType } : {}), ...(options.metadata ? { metadata: options.metadata } : {}) };
    options.signal?.throwIfAborted();
    if (typeof body === 'string' || body instanceof Uint8Array) {
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      if (bytes.length <= CHUNK_BYTES) return (await this.call({ op: 'put', key, options: meta, bytes }, options.signal)) as PutResult;
      return (await this.chunked(key, meta, Readable.from([bytes]), options.signal)) as PutResult;
    }
    return (await this.chunked(key, meta, body, options.signal)) as PutResult;
  }

  async get(key: string, options: { signal?: AbortSignal } = {}): Promise<Readable> {
    const { id, answer } = this.start({ op: 'get', key }, options.signal);
    const body = new Readable({ read: () => undefined });
    this.pending.get(id)!.body = body;
    await answer;
    return body;
  }

  async head(key: string): Promise<BlobInfo | null> {
    return (await this.call({ op: 'head', key })) as BlobInfo | null;
  }

  async copy(fromKey: string, toKey: string, options: CopyOptions = {}): Promise<CopyResult> {
    return (await this.call({ op: 'copy', fromKey, toKey, options })) as CopyResult;
  }

  async delete(key: string): Promise<void> {
    await this.call({ op: 'delete', key });
  }

  async *list(prefix: string, options: { limit?: number } = {}): AsyncIterable<BlobInfo> {
    const found = (await this.call({ op: 'list', prefix, ...(options.limit !== undefined ? { limit: options.limit } : {}) })) as BlobInfo[];
    yield* found;
  }

  async ensureBucket(): Promise<void> {
    throw new BlobAccessDeniedError('a job host cannot create buckets');
  }

  async probe(): Promise<void> {
    throw new BlobAccessDeniedError('a job host does not probe the object store: the worker does');
  }

  close(): void {
    for (const [id, pending] of this.pending) {
      pending.reject(new BlobStoreError('the object store was closed'));
      pending.body?.destroy(new BlobStoreError('the object store was closed'));
      this.pending.delete(id);
    }
  }

  private async call(call: BlobCall, signal?: AbortSignal): Promise<BlobValue> {
    return this.start(call, signal).answer;
  }

  private start(call: BlobCall, signal?: AbortSignal): { id: number; answer: Promise<BlobValue> } {
    const id = this.nextId++;
    const answer = new Promise<BlobValue>((resolve, reject) => {
      const onAbort = () => {
        this.pending.get(id)?.body?.destroy(new BlobStoreError('the call was aborted'));
        this.pending.delete(id);
        void this.send({ type: 'blob-abort', id });
        reject(signal!.reason instanceof Error ? signal!.reason : new BlobStoreError('the call was aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => signal?.removeEventListener('abort', onAbort);
      this.pending.set(id, {
        resolve: (v) => {
          done();
          resolve(v);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      });
    });
    this.send({ type: 'blob', id, ...call }).catch((err: unknown) => {
      const pending = this.pending.get(id);
      this.pending.delete(id);
      pending?.reject(new BlobStoreError(`the worker could not be asked: ${(err as Error).message}`));
    });
    return { id, answer };
  }

  /** A body of unknown size: sent as it is read, each chunk handed to the channel before the next is read. */
  private async chunked(key: string, options: PutOptions, body: Readable, signal?: AbortSignal): Promise<BlobValue> {
    const { id, answer } = this.start({ op: 'put', key, options }, signal);
    // An early refusal (a key outside the tenant's jobs) ends the upload: stop reading then.
    let refused = false;
    answer.catch(() => (refused = true));
    try {
      for await (const piece of body) {
        if (refused || signal?.aborted) break;
        for (const chunk of wireChunks(piece)) await this.send({ type: 'blob-put-chunk', id, chunk });
      }
      if (!refused && !signal?.aborted) await this.send({ type: 'blob-put-end', id });
    } catch (err) {
      await this.send({ type: 'blob-abort', id }).catch(() => undefined);
      const pending = this.pending.get(id);
      this.pending.delete(id);
      pending?.reject(new BlobStoreError(`the body of ${key} could not be read: ${(err as Error).message}`, { cause: err }));
    }
    return answer;
  }
}

function fromWire(error: WireError): Error {
  if (error.name === 'BlobNotFoundError' && error.bucket !== undefined && error.key !== undefined) return new BlobNotFoundError(error.bucket, error.key);
  if (error.name === 'BlobAccessDeniedError') return new BlobAccessDeniedError(error.message);
  return new BlobStoreError(error.message);
}

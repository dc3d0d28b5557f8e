/**
 * A job host's object store over its worker's broker, on the real S3 server: the two ends wired in one process
 * (each message serialized as the IPC channel's advanced serialization does), everything else real. What a job
 * host may reach is its tenant's jobs' objects, and nothing else.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { serialize, deserialize } from 'node:v8';
import { afterAll, describe, expect, it } from 'vitest';
import { BlobNotFoundError, createBlobStore } from '@weir/blob';
import { BlobAccessDeniedError, BlobBroker } from '../../apps/worker/src/blob-broker/blob-broker';
import { BrokeredBlobStore } from '../../apps/worker/src/blob-broker/brokered-blob-store';
import { testConfig } from '../control-plane/support/control-plane';

const run = randomBytes(4).toString('hex');
const TENANT = `brk${run}`;
const OTHER = `${TENANT}-other`;
const config = testConfig();
const worker = createBlobStore(config);

/** Delivered on a later turn, copied as v8 serializes it: what crossing the channel does to a message. */
const across = async <T>(message: T): Promise<T> => {
  await new Promise((resolve) => setImmediate(resolve));
  return deserialize(serialize(message)) as T;
};

function jobHostStore(tenantId: string): BrokeredBlobStore {
  // Each end calls the other only once both exist.
  const store: BrokeredBlobStore = new BrokeredBlobStore(config.WEIR_S3_BUCKET, async (request): Promise<void> => broker.handle(await across(request)));
  const broker: BlobBroker = new BlobBroker(worker, tenantId, async (reply): Promise<void> => store.onReply(await across(reply)));
  return store;
}

const readAll = async (body: Readable) => {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
};

describe("a job host's object store, through its worker (real S3)", () => {
  const store = jobHostStore(TENANT);
  const mine = `tenants/${TENANT}/jobs/job-1/`;

  afterAll(async () => {
    for (const prefix of [`tenants/${TENANT}/`, `tenants/${OTHER}/`]) for await (const info of worker.list(prefix)) await worker.delete(info.key);
    worker.close();
  });

  it('puts, gets, heads, lists, copies and deletes under its tenant’s jobs, small bodies and large streamed ones', async () => {
    const small = Buffer.from('{"checkpoint":1}');
    const large = randomBytes(3 * 1024 * 1024 + 17);
    await store.put(`${mine}small.json`, small, { contentType: 'application/json' });
    await store.put(`${mine}large.bin`, Readable.from([large.subarray(0, 1_000_000), large.subarray(1_000_000)]));
    expect(await readAll(await store.get(`${mine}small.json`))).toEqual(small);
    expect((await readAll(await store.get(`${mine}large.bin`))).equals(large)).toBe(true);
    expect(await readAll(await worker.get(`${mine}large.bin`))).toHaveLength(large.length);
    expect((await store.head(`${mine}large.bin`))?.size).toBe(large.length);
    await store.copy(`${mine}small.json`, `tenants/${TENANT}/jobs/job-2/small.json`);
    const listed = [];
    for await (const info of store.list(`tenants/${TENANT}/jobs/`)) listed.push(info.key);
    expect(listed).toEqual([`${mine}large.bin`, `${mine}small.json`, `tenants/${TENANT}/jobs/job-2/small.json`]);
    await store.delete(`${mine}small.json`);
    expect(await store.head(`${mine}small.json`)).toBeNull();
    await expect(store.get(`${mine}small.json`)).rejects.toBeInstanceOf(BlobNotFoundError);
  });

  it("refuses another tenant's objects and its own tenant's bundles, and writes nothing there", async () => {
    await worker.put(`tenants/${OTHER}/jobs/job-1/state`, 'theirs');
    const refused = [
      () => store.get(`tenants/${OTHER}/jobs/job-1/state`),
      () => store.put(`tenants/${OTHER}/jobs/job-1/state`, 'forged'),
      () => store.put(`tenants/${OTHER}/jobs/job-1/big`, Readable.from([randomBytes(2 * 1024 * 1024)])),
      () => store.copy(`tenants/${OTHER}/jobs/job-1/state`, `${mine}stolen`),
      () => store.delete(`tenants/${OTHER}/jobs/job-1/state`),
      () => store.head(`tenants/${TENANT}/bundles/fraud/1.0.0/x.js`),
      async () => {
        for await (const info of store.list(`tenants/${OTHER}/`)) return info;
      },
    ];
    for (const call of refused) await expect(call()).rejects.toBeInstanceOf(BlobAccessDeniedError);
    expect((await readAll(await worker.get(`tenants/${OTHER}/jobs/job-1/state`))).toString()).toBe('theirs');
    expect(await worker.head(`tenants/${OTHER}/jobs/job-1/big`)).toBeNull();
    expect(await worker.head(`${mine}stolen`)).toBeNull();
  });
});

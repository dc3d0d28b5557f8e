import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createBlobStore } from '@weir/blob';
import { buildBundle } from '@weir/bundle';
import type { WeirConfig } from '@weir/config';
import { createPool, withTenant } from '@weir/db';
import { createKafkaConnector, type KafkaConnector } from '@weir/kafka';
import pino from 'pino';
import { WorkerApp } from '../../../apps/worker/src/worker-app';
import { eventually, readJson } from '../support/control-plane';

const ROOT = resolve(__dirname, '../../..');

/**
 * A job counting words per key in 1 s event-time windows, reading and writing the tenant's own topics
 * (`t.<tenantId>.…`), as deployments require.
 */
export function wordCountSource(input: string, output: string): string {
  return `
import { aggregate, defineJob, json, kafkaSink, kafkaSource, tumbling } from '@weir/engine';
export default defineJob({ name: 'word-count', maxParallelism: 32 }, (job) => {
  job
    .source('words', kafkaSource<{ word: string; ts: number }>({
      topic: '${input}', format: json(), timestamps: (w) => w.ts, watermarks: { maxOutOfOrdernessMs: 0 },
    }))
    .keyBy('by-word', (w) => w.word)
    .window('counts', tumbling(1000), aggregate<string, { word: string }, number, number, { word: string; start: number; n: number }>(
      { createAccumulator: () => 0, add: (_w, n) => n + 1, getResult: (n) => n },
      (word, w, n) => ({ word, start: w.start, n }),
    ))
    .sink('out', kafkaSink<{ word: string; start: number; n: number }>({ topic: '${output}', format: json() }));
});
`;
}

export const WORD_COUNT_OPERATORS = ['words', 'by-word', 'counts', 'out'];

export interface BuiltJob {
  readonly code: Buffer;
  readonly sha256: string;
}

export async function buildJob(dir: string, source: string): Promise<BuiltJob> {
  const entry = join(dir, `job-${randomBytes(3).toString('hex')}.ts`);
  await writeFile(entry, source);
  const built = await buildBundle(entry);
  return { code: Buffer.from(built.code), sha256: built.sha256 };
}

/**
 * Stores a bundle as the bundles API does (object under tenants/<tenantId>/, row through RLS as the application
 * role), for tests of deployments that do not exercise the upload itself, and for manifests the upload would refuse.
 */
export async function insertBundle(
  config: WeirConfig,
  tenantId: string,
  job: BuiltJob,
  {
    name = 'word-count',
    version = '1.0.0',
    operatorIds = WORD_COUNT_OPERATORS,
    maxParallelism = 32,
    defaultParallelism = 1,
    topics,
  }: { name?: string; version?: string; operatorIds?: string[]; maxParallelism?: number; defaultParallelism?: number; topics?: string[] } = {},
): Promise<string> {
  const id = `b${randomBytes(12).toString('hex')}`;
  const key = `tenants/${tenantId}/bundles/${id}.js`;
  const blobs = createBlobStore(config);
  try {
    await blobs.put(key, job.code);
  } finally {
    blobs.close();
  }
  const manifest = { name, version, entryPoint: 'job.js', operatorIds, rulesSchema: { type: 'object' }, maxParallelism, defaultParallelism, ...(topics ? { topics } : {}) };
  const pool = createPool({ connectionString: config.WEIR_PG_URL, max: 1 });
  try {
    await withTenant(pool, tenantId, (client) =>
      client.query(
        'INSERT INTO bundles (id, tenant_id, name, version, sha256, size_bytes, s3_key, manifest) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
        [id, tenantId, name, version, job.sha256, job.code.length, key, JSON.stringify(manifest)],
      ),
    );
  } finally {
    await pool.end();
  }
  return id;
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** An API client for one tenant key. */
export function api(baseUrl: () => string, key: string) {
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${baseUrl()}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as Record<string, any>, headers: res.headers }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  return {
    call,
    get: (path: string) => call('GET', path),
    post: (path: string, body: unknown, headers?: Record<string, string>) => call('POST', path, body, headers),
    patch: (path: string, body: unknown) => call('PATCH', path, body),
  };
}
export type Api = ReturnType<typeof api>;

export interface DeploymentBody {
  id: string;
  name: string;
  status: string;
  statusReason: string;
  desiredState: string;
  runNo: number;
  bundleId: string;
}

/** Waits until the deployment reaches `status`, failing with its last status and reason. */
export function waitForStatus(client: Api, id: string, status: string, timeoutMs = 40_000): Promise<DeploymentBody> {
  return waitForDeployment(client, id, status, (d) => d.status === status, timeoutMs);
}

export async function waitForDeployment(
  client: Api,
  id: string,
  what: string,
  done: (d: DeploymentBody) => boolean,
  timeoutMs = 40_000,
): Promise<DeploymentBody> {
  let last: DeploymentBody | undefined;
  try {
    return await eventually(
      `deployment ${id} ${what}`,
      async () => {
        const res = await client.get(`/v1/deployments/${id}`);
        last = res.body as DeploymentBody;
        return done(last) ? last : undefined;
      },
      { timeoutMs, everyMs: 100 },
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last seen ${last?.status}: ${last?.statusReason}`);
  }
}

export { readJson };

/**
 * Slots of the tests' workers: the most a worker may declare. Test runs share one database, hence one `workers`
 * table, while each has a queue prefix of its own; placement takes the live worker with the most free slots, so
 * with these a deployment lands on its own test's worker rather than on a concurrent run's (whose queue nobody here
 * consumes). One installation per database has no such neighbours.
 */
export const TEST_WORKER_SLOTS = 256;

/** An in-process worker with its own id, home and slots. */
export async function startWorker(config: WeirConfig, workerId: string, home: string, slots = TEST_WORKER_SLOTS): Promise<WorkerApp> {
  const app = new WorkerApp({ ...config, WEIR_WORKER_ID: workerId, WEIR_HOME: home, WEIR_WORKER_SLOTS: slots }, pino({ level: 'warn' }));
  await app.start();
  return app;
}

/**
 * A worker in a process of its own, so a test can kill it without a goodbye (SIGKILL): no worker.stopping is sent,
 * heartbeats just stop, and the job host child exits when its supervisor's IPC channel closes.
 */
export function spawnWorker(config: WeirConfig, workerId: string, home: string, slots = TEST_WORKER_SLOTS): ChildProcess {
  return spawn(process.execPath, ['-r', '@swc-node/register', 'apps/worker/src/main.ts'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      WEIR_WORKER_ID: workerId,
      WEIR_HOME: home,
      WEIR_WORKER_SLOTS: String(slots),
      WEIR_QUEUE_PREFIX: config.WEIR_QUEUE_PREFIX,
      WEIR_WORKER_HEARTBEAT_MS: String(config.WEIR_WORKER_HEARTBEAT_MS),
      WEIR_LOG_LEVEL: 'warn',
      WEIR_WORKER_METRICS_PORT: '',
    },
  });
}

export async function ensureTopics(config: WeirConfig, topics: string[], partitions = 1): Promise<KafkaConnector> {
  const kafka = createKafkaConnector({ brokers: config.WEIR_KAFKA_BROKERS, clientId: 'weir-test' });
  const admin = kafka.admin();
  await admin.ensureTopics(topics.map((topic) => ({ topic, partitions })));
  await admin.close();
  return kafka;
}

export async function deleteTopics(kafka: KafkaConnector, topics: string[]): Promise<void> {
  const admin = kafka.admin();
  await admin.deleteTopics(topics).catch(() => undefined);
  await admin.close();
}

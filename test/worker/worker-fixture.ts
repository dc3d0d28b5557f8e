import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBlobStore, type BlobStore } from '@weir/blob';
import { buildBundle } from '@weir/bundle';
import type { WeirConfig } from '@weir/config';
import { createKafkaConnector, type KafkaConnector } from '@weir/kafka';
import { createCommandDispatcher, type CommandDispatcher, type RunSubtasks } from '@weir/protocol';
import pino from 'pino';
import { WorkerApp } from '../../apps/worker/src/worker-app';
import { deleteQueues, testConfig, uniquePrefix } from '../control-plane/support/control-plane';

export interface WorkerFixture {
  readonly config: WeirConfig;
  readonly app: WorkerApp;
  readonly kafka: KafkaConnector;
  readonly blobs: BlobStore;
  readonly dispatcher: CommandDispatcher;
  /** The job's bundle, built from its source and stored on S3 under the tenant's prefix. */
  readonly bundle: { key: string; sha256: string };
  /** A run-subtasks command for the fixture's tenant, job and bundle, with a fresh idempotency key. */
  runCommand(run: Pick<RunSubtasks, 'maxParallelism' | 'subtasks'> & Partial<RunSubtasks>): RunSubtasks;
  /** Stops the worker and removes what the fixture and the job created (topics, queues, bundle, home). */
  close(): Promise<void>;
}

/**
 * A real worker (WorkerApp) on its own queue prefix and home folder, with a job bundle built from `jobSource` and
 * stored on S3, and the topics the job reads and writes: what a worker integration test needs before dispatching.
 */
export async function startWorkerFixture(options: {
  tenantId: string;
  jobId: string;
  workerId: string;
  jobSource: string;
  topics: readonly { topic: string; partitions: number }[];
  /** Settings over the test defaults (WEIR_WORKER_WARM_JOB_HOSTS, say). */
  config?: Record<string, string>;
}): Promise<WorkerFixture> {
  const home = await mkdtemp(join(tmpdir(), 'weir-worker-test-'));
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_ID: options.workerId, WEIR_HOME: home, WEIR_WORKER_HEARTBEAT_MS: '200', ...options.config });
  const kafka = createKafkaConnector({ brokers: config.WEIR_KAFKA_BROKERS, clientId: 'weir-test' });
  const admin = kafka.admin();
  await admin.ensureTopics([...options.topics]);
  await admin.close();
  const entry = join(home, `${options.jobId}.ts`);
  await writeFile(entry, options.jobSource);
  const built = await buildBundle(entry);
  const blobs = createBlobStore(config);
  const bundle = { key: `tenants/${options.tenantId}/bundles/${options.jobId}/${built.sha256}.js`, sha256: built.sha256 };
  await blobs.put(bundle.key, built.code);
  const app = new WorkerApp(config, pino({ level: 'warn' }));
  await app.start();
  const dispatcher = createCommandDispatcher(config);
  return {
    config, app, kafka, blobs, dispatcher, bundle,
    runCommand: (run) => ({
      v: 1,
      type: 'run-subtasks',
      idempotencyKey: `run-${randomBytes(4).toString('hex')}`,
      issuedAt: Date.now(),
      tenantId: options.tenantId,
      jobId: options.jobId,
      bundle,
      ...run,
    }),
    async close() {
      await dispatcher.close();
      await app.stop('test finished');
      await blobs.delete(bundle.key).catch(() => undefined);
      blobs.close();
      const cleanup = kafka.admin();
      await cleanup.deleteTopics([...options.topics.map((t) => t.topic), `weir.${options.tenantId}.${options.jobId}.dead-letters`]);
      await cleanup.close();
      await deleteQueues(config);
      await rm(home, { recursive: true, force: true });
    },
  };
}

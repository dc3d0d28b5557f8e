/**
 * The platform an end-to-end test runs against, as one vitest fixture: a tenant with its own topics, a control plane
 * on its own queue prefix, workers (in this process, or in processes of their own that a test may SIGKILL) and an
 * API client with the tenant's write key. Everything it made is removed after the file's tests: workers, control
 * plane, the tenant's rows and S3 objects, the fleet rows, the topics (with each tracked deployment's sink-commit and
 * dead-letter topics), the queues and the temporary home.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WeirConfig } from '@weir/config';
import { sinkCommitsTopic } from '@weir/engine';
import { createKafkaConnector, type KafkaConnector } from '@weir/kafka';
import { afterAll, beforeAll } from 'vitest';
import type { WorkerApp } from '../../apps/worker/src/worker-app';
import { api, deleteTopics, spawnWorker, startWorker, TEST_WORKER_SLOTS, type Api } from '../control-plane/deployments/support';
import { deleteQueues, deleteWorkers, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../control-plane/support/control-plane';
import { createTestTenant, type TestTenant } from '../control-plane/support/tenants';

export interface PlatformOptions<T extends string> {
  /** Names the temporary home and the workers (`<name>-<role>-<run>`). */
  readonly name: string;
  /**
   * Worker heartbeat interval; a worker silent for three is LOST. 500 ms by default: a loaded 2-core machine
   * stalls a process for hundreds of milliseconds, and a worker declared LOST by a stall is re-placed (a run more).
   */
  readonly heartbeatMs?: number;
  /** The tenant's topics by role: each is created as `t.<tenantId>.<suffix>`. */
  readonly topics: Record<T, string>;
  /** Partitions of every topic, or per role (1 where not given). */
  readonly partitions?: number | Partial<Record<T, number>>;
  /** In-process workers started before the tests (roles `worker`, `worker2`, …); 1 by default. */
  readonly workers?: number;
  readonly workerSlots?: number;
  /** After the tenant and topics exist, before the control plane and workers start (an S3 gate, say). */
  readonly beforeStart?: () => Promise<void>;
  /** Settings of the in-process workers only (read as each starts): an S3 endpoint behind a gate, say. */
  readonly workerSettings?: () => Partial<WeirConfig>;
  /** First thing of the teardown, before the workers stop. */
  readonly beforeStop?: () => Promise<void>;
  /** After the workers and the control plane stopped, before the tenant and topics are removed. */
  readonly afterStop?: () => Promise<void>;
}

/** What a test gets: the fields are set once the fixture's beforeAll ran (read them inside hooks and tests). */
export interface Platform<T extends string> {
  readonly run: string;
  readonly config: WeirConfig;
  readonly home: string;
  readonly cp: RunningControlPlane;
  readonly tenant: TestTenant;
  readonly kafka: KafkaConnector;
  readonly client: Api;
  readonly topics: Readonly<Record<T, string>>;
  /** The first in-process worker started before the tests. */
  readonly worker: WorkerApp;
  workerId(role: string): string;
  /** Starts an in-process worker (stopped in the teardown). */
  startWorker(role: string, slots?: number): Promise<WorkerApp>;
  /** Starts a worker in a process of its own, which a test may kill without a goodbye (killed in the teardown). */
  spawnWorker(role: string): ChildProcess;
  /** Creates a deployment (201 expected) and tracks it; returns its id. */
  deploy(body: Record<string, unknown>, headers?: Record<string, string>): Promise<string>;
  /** Tracks a deployment created otherwise: its internal topics are deleted in the teardown. */
  track(deploymentId: string): void;
}

export function platformFixture<T extends string>(options: PlatformOptions<T>): Platform<T> {
  const run = randomBytes(3).toString('hex');
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: String(options.heartbeatMs ?? 500) });
  const inProcess: WorkerApp[] = [];
  const spawned: ChildProcess[] = [];
  const workerIds: string[] = [];
  const deployments: string[] = [];
  const state = {} as { home: string; cp: RunningControlPlane; tenant: TestTenant; kafka: KafkaConnector; client: Api; topics: Record<T, string> };
  const live = <K extends keyof typeof state>(key: K): (typeof state)[K] => {
    if (state[key] === undefined) throw new Error(`platform.${key} is set by the fixture's beforeAll: read it inside a hook or test`);
    return state[key];
  };
  const workerId = (role: string) => `${options.name}-${role}-${run}`;
  const register = (role: string) => {
    const id = workerId(role);
    workerIds.push(id);
    return { id, home: join(live('home'), role) };
  };

  const platform: Platform<T> = {
    run,
    config,
    get home() { return live('home'); },
    get cp() { return live('cp'); },
    get tenant() { return live('tenant'); },
    get kafka() { return live('kafka'); },
    get client() { return live('client'); },
    get topics() { return live('topics'); },
    get worker() {
      if (!inProcess[0]) throw new Error('the platform started no in-process worker');
      return inProcess[0];
    },
    workerId,
    async startWorker(role, slots = options.workerSlots ?? TEST_WORKER_SLOTS) {
      const { id, home } = register(role);
      const worker = await startWorker({ ...config, ...options.workerSettings?.() }, id, home, slots);
      inProcess.push(worker);
      return worker;
    },
    spawnWorker(role) {
      const { id, home } = register(role);
      const child = spawnWorker(config, id, home, options.workerSlots ?? TEST_WORKER_SLOTS);
      spawned.push(child);
      return child;
    },
    async deploy(body, headers) {
      const created = await platform.client.post('/v1/deployments', body, headers);
      if (created.status !== 201) throw new Error(`POST /v1/deployments answered ${created.status}: ${JSON.stringify(created.body)}`);
      platform.track(created.body.id as string);
      return created.body.id as string;
    },
    track(deploymentId) {
      deployments.push(deploymentId);
    },
  };

  beforeAll(async () => {
    state.home = await mkdtemp(join(tmpdir(), `weir-${options.name}-`));
    state.tenant = await createTestTenant(config);
    const roles = Object.keys(options.topics) as T[];
    state.topics = Object.fromEntries(roles.map((role) => [role, `t.${state.tenant.tenantId}.${options.topics[role]}`])) as Record<T, string>;
    state.kafka = await createTopics(config, roles.map((role) => ({ topic: state.topics[role], partitions: partitionsOf(options.partitions, role) })));
    await options.beforeStart?.();
    state.cp = await startControlPlane(config);
    state.client = api(() => state.cp.url, state.tenant.writeKey);
    for (let i = 0; i < (options.workers ?? 1); i++) await platform.startWorker(i === 0 ? 'worker' : `worker${i + 1}`);
  });

  afterAll(async () => {
    await options.beforeStop?.();
    for (const child of spawned) child.kill('SIGKILL');
    for (const worker of inProcess) await worker.stop('test finished').catch(() => undefined);
    await state.cp?.close();
    await options.afterStop?.();
    await state.tenant?.cleanup();
    await deleteWorkers(config, workerIds);
    if (state.kafka) {
      const internal = deployments.flatMap((id) => [sinkCommitsTopic(state.tenant.tenantId, id), `weir.${state.tenant.tenantId}.${id}.dead-letters`]);
      await deleteTopics(state.kafka, [...Object.values<string>(state.topics), ...internal]);
    }
    await deleteQueues(config);
    if (state.home) await rm(state.home, { recursive: true, force: true });
  });

  return platform;
}

function partitionsOf<T extends string>(partitions: PlatformOptions<T>['partitions'], role: T): number {
  return typeof partitions === 'number' ? partitions : (partitions?.[role] ?? 1);
}

/** The tenant's topics, each with its own partition count. */
async function createTopics(config: WeirConfig, topics: readonly { topic: string; partitions: number }[]): Promise<KafkaConnector> {
  const kafka = createKafkaConnector({ brokers: config.WEIR_KAFKA_BROKERS, clientId: 'weir-test' });
  const admin = kafka.admin();
  await admin.ensureTopics(topics);
  await admin.close();
  return kafka;
}

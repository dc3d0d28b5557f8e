/**
 * End to end over GraphQL against real services and a real worker: createDeployment (mutation) → the reconciler
 * dispatches it → records flow through Kafka → the worker's heartbeats carry metrics → they arrive on a graphql-ws
 * `deploymentMetrics` subscription; suspend and resume through `setDeploymentDesiredState`, each status change
 * pushed on `deploymentStatus`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KafkaConnector, KafkaWriter } from '@weir/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisPubSub } from '../../../apps/control-plane/src/events/redis-pubsub';
import type { WorkerApp } from '../../../apps/worker/src/worker-app';
import { deleteQueues, deleteWorkers, eventually, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';
import { buildJob, deleteTopics, ensureTopics, insertBundle, startWorker, wordCountSource } from '../deployments/support';
import { collect, connectWs, deleteEventKeys, gql, type WsConnection } from './support';

const run = randomBytes(3).toString('hex');
// 500 ms, not 200: a false LOST under load would add a run and a RECOVERING push to the statuses checked below.
const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: '500' });
const workerId = `gql-e2e-${run}`;
let home: string;
let app: RunningControlPlane;
let tenant: TestTenant;
let kafka: KafkaConnector;
let writer: KafkaWriter | undefined;
let worker: WorkerApp | undefined;
let topics: string[];
let bundleId: string;
let ws: WsConnection | undefined;
let deploymentId: string | undefined;
let producing: NodeJS.Timeout | undefined;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'weir-gql-e2e-'));
  tenant = await createTestTenant(config);
  topics = [`t.${tenant.tenantId}.words`, `t.${tenant.tenantId}.counts`];
  kafka = await ensureTopics(config, topics);
  bundleId = await insertBundle(config, tenant.tenantId, await buildJob(home, wordCountSource(topics[0], topics[1])));
  app = await startControlPlane(config);
  // More slots than other runs' workers usually offer: placement picks the worker with the most free slots.
  worker = await startWorker(config, workerId, join(home, 'worker'), 16);
});

afterAll(async () => {
  clearInterval(producing);
  await ws?.client.dispose();
  await writer?.close();
  if (deploymentId) await gql(app.url, tenant.writeKey, 'mutation ($id: ID!) { setDeploymentDesiredState(id: $id, desiredState: CANCELLED) { status } }', { id: deploymentId });
  await worker?.stop('test finished').catch(() => undefined);
  await app?.close();
  await tenant?.cleanup();
  await deleteWorkers(config, [workerId]);
  if (kafka) await deleteTopics(kafka, [...topics, ...(deploymentId ? [`weir.${tenant.tenantId}.${deploymentId}.dead-letters`] : [])]);
  await deleteQueues(config);
  await deleteEventKeys(config);
  await rm(home, { recursive: true, force: true });
});

interface StatusItem {
  deploymentStatus: { status: string; previousStatus: string | null; reason: string };
}
interface MetricsItem {
  deploymentMetrics: { deploymentId: string; recordsInPerSec: number; subtasks: number; eventTimeLatency: { samples: number } };
}

describe('GraphQL end to end', { timeout: 120_000 }, () => {
  it('deploys, pushes live metrics of real records, suspends and resumes', async () => {
    const created = await gql<{ createDeployment: { id: string; status: string; desiredState: string } }>(
      app.url,
      tenant.writeKey,
      `mutation ($input: CreateDeploymentInput!) { createDeployment(input: $input) { id status desiredState } }`,
      { input: { name: `wc-${run}`, bundleId, desiredState: 'SUSPENDED', parallelism: { default: 1 } } },
    );
    expect(created.body.errors).toBeUndefined();
    const id = created.body.data!.createDeployment.id;
    deploymentId = id;

    ws = connectWs(app.url, `Bearer ${tenant.readKey}`);
    await ws.connected;
    const statuses = collect<StatusItem>(ws.client, 'subscription ($id: ID!) { deploymentStatus(deploymentId: $id) { status previousStatus reason } }', { id });
    const metrics = collect<MetricsItem>(
      ws.client,
      'subscription ($id: ID!) { deploymentMetrics(deploymentId: $id) { deploymentId recordsInPerSec subtasks eventTimeLatency { samples } } }',
      { id },
    );
    // Created suspended so that both subscriptions are in place before anything happens; start it now.
    const setState = (state: string) =>
      gql(app.url, tenant.writeKey, 'mutation ($id: ID!, $s: DesiredState!) { setDeploymentDesiredState(id: $id, desiredState: $s) { desiredState } }', { id, s: state });
    const pubsub = app.app.get(RedisPubSub);
    await eventually('both subscriptions live', async () => (pubsub.channelCount >= 2 ? true : undefined));
    expect((await setState('RUNNING')).body.errors).toBeUndefined();

    /** Waits until `status` is pushed after the first `from` pushes; on a timeout says what was pushed and where it is. */
    const pushed = (status: string, from = 0) =>
      eventually(`${status} pushed`, async () => (statuses.items.slice(from).some((s) => s.deploymentStatus.status === status) ? true : undefined), {
        timeoutMs: 45_000,
      }).catch(async (err: Error) => {
        const now = await gql(app.url, tenant.readKey, 'query ($id: ID!) { deployment(id: $id) { status statusReason desiredState } }', { id });
        throw new Error(`${err.message}; pushed ${JSON.stringify(statuses.items.map((s) => s.deploymentStatus))}; now ${JSON.stringify(now.body.data)}`);
      });
    await pushed('RUNNING');

    writer = kafka.writer({ writerId: `gql-e2e-${run}` });
    await writer.start();
    producing = setInterval(() => {
      const now = Date.now();
      void writer?.send(Array.from({ length: 50 }, (_, i) => ({ topic: topics[0], key: `w${i % 5}`, value: JSON.stringify({ word: `w${i % 5}`, ts: now }) }))).catch(() => undefined);
    }, 100);

    const flowing = await eventually(
      'metrics with records in',
      async () => metrics.items.find((m) => m.deploymentMetrics.recordsInPerSec > 0),
      { timeoutMs: 40_000 },
    );
    expect(flowing.deploymentMetrics.deploymentId).toBe(id);
    expect(flowing.deploymentMetrics.subtasks).toBeGreaterThan(0);

    // Only pushes after this point count: the deployment was created SUSPENDED, and that push is already here.
    const pushedBeforeSuspend = statuses.items.length;
    expect((await setState('SUSPENDED')).body.errors).toBeUndefined();
    await pushed('SUSPENDED', pushedBeforeSuspend);
    const pushedBeforeResume = statuses.items.length;
    expect((await setState('RUNNING')).body.errors).toBeUndefined();
    await pushed('RUNNING', pushedBeforeResume);
    const sequence = statuses.items.map((s) => s.deploymentStatus.status);
    expect(sequence).toEqual(expect.arrayContaining(['STARTING', 'RUNNING', 'STOPPING', 'SUSPENDED']));
    expect(statuses.items.every((s) => s.deploymentStatus.reason.length > 0)).toBe(true);
    expect(metrics.errors).toEqual([]);

    const read = await gql<{ deployment: { status: string; metrics: { recordsInPerSec: number } | null } }>(
      app.url,
      tenant.readKey,
      'query ($id: ID!) { deployment(id: $id) { status metrics { recordsInPerSec } } }',
      { id },
    );
    expect(read.body.data?.deployment.status).toBe('RUNNING');
  });
});

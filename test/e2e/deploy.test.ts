/**
 * End to end over HTTP against the real services: a tenant uploads a bundle, deploys it, records flow through Kafka
 * (its input topic → keyed windows on a real worker → its output topic), then it is suspended and resumed and
 * records flow again.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KafkaConnector, KafkaReader } from '@weir/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerApp } from '../../apps/worker/src/worker-app';
import { api, buildJob, deleteTopics, ensureTopics, startWorker, waitForDeployment, waitForStatus, wordCountSource, type Api } from '../control-plane/deployments/support';
import { uploadBundle } from './upload-bundle';
import { deleteQueues, deleteWorkers, eventually, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../control-plane/support/control-plane';
import { createTestTenant, type TestTenant } from '../control-plane/support/tenants';

const run = randomBytes(3).toString('hex');

interface WindowCount {
  word: string;
  start: number;
  n: number;
}

describe('deploy end to end', () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: '250' });
  const workerId = `e2e-worker-${run}`;
  let home: string;
  let cp: RunningControlPlane;
  let worker: WorkerApp;
  let tenant: TestTenant;
  let kafka: KafkaConnector;
  let topics: { input: string; output: string };
  let client: Api;
  let reader: KafkaReader;
  let deploymentId: string | undefined;
  const counts: WindowCount[] = [];

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'weir-e2e-'));
    tenant = await createTestTenant(config);
    topics = { input: `t.${tenant.tenantId}.words`, output: `t.${tenant.tenantId}.counts` };
    kafka = await ensureTopics(config, [topics.input, topics.output]);
    cp = await startControlPlane(config);
    worker = await startWorker(config, workerId, join(home, 'worker'));
    client = api(() => cp.url, tenant.writeKey);
    reader = kafka.reader({ readerId: `e2e-out-${run}`, assignments: [{ topic: topics.output, partition: 0, offset: 'earliest' }] });
    await reader.start();
  });

  afterAll(async () => {
    await reader?.close();
    await worker?.stop('test finished');
    await cp?.close();
    await tenant?.cleanup();
    await deleteWorkers(config, [workerId]);
    if (kafka) await deleteTopics(kafka, [topics.input, topics.output, ...(deploymentId ? [`weir.${tenant.tenantId}.${deploymentId}.dead-letters`] : [])]);
    await deleteQueues(config);
    await rm(home, { recursive: true, force: true });
  });

  /** Sends words stamped inside [windowStart, windowStart + 1000), then a record that closes that window. */
  async function sendWindow(words: string[], windowStart: number): Promise<void> {
    const writer = kafka.writer({ writerId: `e2e-${run}-${windowStart}` });
    await writer.start();
    await writer.send(words.map((word, i) => ({ topic: topics.input, partition: 0, value: JSON.stringify({ word, ts: windowStart + i }) })));
    await writer.send([{ topic: topics.input, partition: 0, value: JSON.stringify({ word: 'zz-end', ts: windowStart + 4_000 }) }]);
    await writer.close();
  }

  async function countsOf(windowStart: number, words: number): Promise<WindowCount[]> {
    return eventually(`window ${windowStart} on ${topics.output}`, async () => {
      for (const r of await reader.poll(1000, 200)) counts.push(JSON.parse(r.value!.toString()) as WindowCount);
      const window = counts.filter((c) => c.start === windowStart);
      return window.length >= words ? window.sort((a, b) => a.word.localeCompare(b.word)) : undefined;
    }, { timeoutMs: 60_000, everyMs: 50 });
  }

  it('upload → deploy → records flow → suspend → resume → records flow', async () => {
    const job = await buildJob(home, wordCountSource(topics.input, topics.output));
    const bundle = await uploadBundle(cp.url, tenant.writeKey, job, { name: 'word-count', version: '1.0.0', topics: [topics.input, topics.output] });

    const created = await client.post('/v1/deployments', {
      name: 'word-count',
      bundle: { name: 'word-count', version: '1.0.0' },
      parallelism: { default: 1, operators: { counts: 2 } },
      config: { topics: { words: topics.input, counts: topics.output } },
    }, { 'idempotency-key': `e2e-${run}` });
    expect(created.status).toBe(201);
    deploymentId = created.body.id as string;
    expect(created.body.bundleId).toBe(bundle);
    await waitForStatus(client, deploymentId, 'RUNNING');

    await sendWindow(['apple', 'pear', 'apple', 'fig', 'apple', 'pear'], 1_000);
    expect(await countsOf(1_000, 3)).toEqual([
      { word: 'apple', start: 1_000, n: 3 },
      { word: 'fig', start: 1_000, n: 1 },
      { word: 'pear', start: 1_000, n: 2 },
    ]);

    expect((await client.patch(`/v1/deployments/${deploymentId}`, { desiredState: 'SUSPENDED' })).status).toBe(200);
    await waitForStatus(client, deploymentId, 'SUSPENDED');
    expect(worker.supervisor.runningSubtasks().filter((s) => s.jobId === deploymentId)).toEqual([]);

    expect((await client.patch(`/v1/deployments/${deploymentId}`, { desiredState: 'RUNNING' })).status).toBe(200);
    await waitForDeployment(client, deploymentId, 'running again', (d) => d.status === 'RUNNING' && d.runNo === 2);

    await sendWindow(['kiwi', 'kiwi', 'plum'], 20_000);
    expect(await countsOf(20_000, 2)).toEqual([
      { word: 'kiwi', start: 20_000, n: 2 },
      { word: 'plum', start: 20_000, n: 1 },
    ]);

    const history = await client.get(`/v1/deployments/${deploymentId}/history`);
    expect(history.body.transitions.map((t: { to: string }) => t.to)).toEqual(['CREATED', 'STARTING', 'RUNNING', 'STOPPING', 'SUSPENDED', 'STARTING', 'RUNNING']);
  });
});

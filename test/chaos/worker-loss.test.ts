/**
 * Recovery end to end: a deployment with an exactly-once sink runs on a worker process that is killed (SIGKILL, no
 * goodbye); the reconciler declares it LOST, re-places the run on another worker with restoreFrom "latest", the new
 * job host restores the latest checkpoint, and the committed output equals an uninterrupted run's.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBlobStore } from '@weir/blob';
import { CheckpointStore } from '@weir/checkpoint';
import { sinkCommitsTopic } from '@weir/engine';
import type { KafkaConnector } from '@weir/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerApp } from '../../apps/worker/src/worker-app';
import { api, buildJob, deleteTopics, ensureTopics, insertBundle, spawnWorker, startWorker, waitForStatus, type Api } from '../control-plane/deployments/support';
import { adminHeaders, deleteQueues, deleteWorkers, eventually, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../control-plane/support/control-plane';
import { createTestTenant, type TestTenant } from '../control-plane/support/tenants';
import { expectedOutput, inputRecords, type Output, readAll, sortOutputs, TOTALS_OPERATORS, totalsJobSource } from './support';

const run = randomBytes(3).toString('hex');
const RECORDS = 8_000;

describe('worker loss with an exactly-once sink', { timeout: 150_000 }, () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: '200' });
  const workerIds = [`loss-doomed-${run}`, `loss-survivor-${run}`];
  let home: string;
  let cp: RunningControlPlane;
  let tenant: TestTenant;
  let kafka: KafkaConnector;
  let topics: { input: string; output: string };
  let client: Api;
  let doomed: ChildProcess | undefined;
  let survivor: WorkerApp | undefined;
  let deploymentId: string | undefined;
  const blob = createBlobStore(config);

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'weir-loss-'));
    tenant = await createTestTenant(config);
    topics = { input: `t.${tenant.tenantId}.in`, output: `t.${tenant.tenantId}.out` };
    kafka = await ensureTopics(config, [topics.input, topics.output], 2);
    cp = await startControlPlane(config);
    client = api(() => cp.url, tenant.writeKey);
  });

  afterAll(async () => {
    doomed?.kill('SIGKILL');
    await survivor?.stop('test finished').catch(() => undefined);
    await cp?.close();
    if (tenant) {
      for await (const info of blob.list(`tenants/${tenant.tenantId}/jobs/`)) await blob.delete(info.key);
    }
    blob.close();
    await tenant?.cleanup();
    await deleteWorkers(config, workerIds);
    if (kafka && deploymentId) {
      await deleteTopics(kafka, [topics.input, topics.output, sinkCommitsTopic(tenant.tenantId, deploymentId), `weir.${tenant.tenantId}.${deploymentId}.dead-letters`]);
    }
    await deleteQueues(config);
    await rm(home, { recursive: true, force: true });
  });

  it('SIGKILL of the worker: re-placed, restored from the latest checkpoint, output exact', async () => {
    const workerStatus = async (id: string) => {
      const res = await fetch(`${cp.url}/v1/workers/${id}`, { headers: adminHeaders() });
      return res.status === 200 ? ((await res.json()) as { status: string }).status : undefined;
    };
    doomed = spawnWorker(config, workerIds[0], join(home, 'doomed'));
    await eventually('the doomed worker registered', async () => ((await workerStatus(workerIds[0])) === 'ALIVE' ? true : undefined));
    const job = await buildJob(home, totalsJobSource(topics.input, topics.output));
    const bundleId = await insertBundle(config, tenant.tenantId, job, { name: 'totals', operatorIds: TOTALS_OPERATORS, topics: [topics.input, topics.output] });
    const created = await client.post('/v1/deployments', {
      name: `totals-${run}`,
      bundleId,
      parallelism: { default: 2, operators: {} },
      config: { properties: { 'checkpoint.interval-ms': '300', 'sink.delivery': 'exactly-once' } },
    });
    expect(created.status).toBe(201);
    deploymentId = created.body.id as string;
    await waitForStatus(client, deploymentId, 'RUNNING');

    const writer = kafka.writer({ writerId: `loss-${run}` });
    await writer.start();
    await writer.send(inputRecords(topics.input, 0, RECORDS / 2, 2));
    const store = new CheckpointStore(blob);
    const scope = { tenantId: tenant.tenantId, jobId: deploymentId };
    await eventually('a checkpoint on S3', async () => {
      const latest = await store.latest(scope);
      return latest && latest.manifest.checkpointId >= 3 ? latest : undefined;
    }, { timeoutMs: 30_000, everyMs: 100 });
    await writer.send(inputRecords(topics.input, RECORDS / 2, (3 * RECORDS) / 4, 2));

    survivor = await startWorker(config, workerIds[1], join(home, 'survivor'));
    doomed.kill('SIGKILL');
    await waitForStatus(client, deploymentId, 'RECOVERING');
    const recovered = await waitForStatus(client, deploymentId, 'RUNNING', 60_000);
    expect(recovered.runNo).toBe(2);
    const history = await client.get(`/v1/deployments/${deploymentId}/history`);
    expect(history.body.runs[0]).toMatchObject({ workerId: workerIds[1], restoreFrom: { snapshotId: 'latest' } });

    await writer.send(inputRecords(topics.input, (3 * RECORDS) / 4, RECORDS, 2));
    await writer.close();
    const records = await readAll(kafka, topics.output, 2, (n) => n >= RECORDS, 30_000);
    const outputs = sortOutputs(records.map((r) => JSON.parse(r.value!.toString()) as Output));
    expect(outputs.length).toBe(RECORDS);
    expect(outputs).toEqual(expectedOutput(RECORDS));
  });
});

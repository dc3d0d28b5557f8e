/**
 * The reconciler across restarts of the control plane, and a run its worker refuses: the deployment's state lives in
 * Postgres, so a new instance carries on where the old one stopped; a refused command becomes FAILED with the
 * worker's own reason.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KafkaConnector } from '@weir/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerApp } from '../../../apps/worker/src/worker-app';
import { deleteQueues, deleteWorkers, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';
import { api, buildJob, deleteTopics, ensureTopics, insertBundle, startWorker, waitForDeployment, waitForStatus, wordCountSource, type Api, type BuiltJob } from './support';

const run = randomBytes(3).toString('hex');

describe('reconciler', { timeout: 150_000 }, () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: '200' });
  const workerIds = [`rw-1-${run}`, `rw-2-${run}`];
  let home: string;
  let tenant: TestTenant;
  let kafka: KafkaConnector;
  let topics: string[];
  let job: BuiltJob;
  let bundleId: string;
  let cp: RunningControlPlane | undefined;
  let client: Api;
  const workers: WorkerApp[] = [];
  const deployed: string[] = [];

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'weir-reconciler-'));
    tenant = await createTestTenant(config);
    topics = [`t.${tenant.tenantId}.words`, `t.${tenant.tenantId}.counts`];
    kafka = await ensureTopics(config, topics);
    job = await buildJob(home, wordCountSource(topics[0], topics[1]));
    bundleId = await insertBundle(config, tenant.tenantId, job);
    client = api(() => cp!.url, tenant.writeKey);
  });

  afterAll(async () => {
    await cp?.close();
    for (const w of workers) await w.stop('test finished').catch(() => undefined);
    await tenant?.cleanup();
    await deleteWorkers(config, workerIds);
    if (kafka) await deleteTopics(kafka, [...topics, ...deployed.map((id) => `weir.${tenant.tenantId}.${id}.dead-letters`)]);
    await deleteQueues(config);
    await rm(home, { recursive: true, force: true });
  });

  it('carries on after a restart of the control plane: a worker that left meanwhile is replaced', async () => {
    cp = await startControlPlane(config);
    const first = await startWorker(config, workerIds[0], join(home, 'w1'));
    workers.push(first);
    const created = await client.post('/v1/deployments', { name: `restart-${run}`, bundleId });
    const id = created.body.id as string;
    deployed.push(id);
    await waitForStatus(client, id, 'RUNNING');

    // No control plane runs while the worker leaves: its goodbye waits in the queue.
    await cp.close();
    cp = undefined;
    await first.stop('leaving while no control plane runs');
    workers.splice(0, 1);
    workers.push(await startWorker(config, workerIds[1], join(home, 'w2')));

    cp = await startControlPlane(config);
    const recovered = await waitForDeployment(client, id, 'running on the second worker', (d) => d.status === 'RUNNING' && d.runNo === 2);
    expect(recovered.runNo).toBe(2);
    const history = await client.get(`/v1/deployments/${id}/history`);
    expect(history.body.runs.map((r: { workerId: string; outcome: string | null }) => [r.workerId, r.outcome])).toEqual([
      [workerIds[1], null],
      [workerIds[0], 'LOST'],
    ]);
    const reasons = (history.body.transitions as { to: string; reason: string }[]).filter((t) => t.to === 'RECOVERING').map((t) => t.reason);
    // STOPPED once its queued goodbye is consumed; LOST if the new instance's sweep got there first.
    expect(reasons).toEqual([expect.stringMatching(`worker ${workerIds[0]} is (STOPPED|LOST) \\(it hosted process 0 of run 1\\)`)]);
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
    await waitForStatus(client, id, 'CANCELLED');
  });

  it("goes FAILED with the worker's reason when the worker refuses the run; restarts on request; can be suspended", async () => {
    // The manifest claims 64 key groups, the job itself declares 32: the job host refuses to start it.
    const mismatched = await insertBundle(config, tenant.tenantId, job, { version: '1.0.1-bad', maxParallelism: 64 });
    const created = await client.post('/v1/deployments', { name: `refused-${run}`, bundleId: mismatched });
    const id = created.body.id as string;
    deployed.push(id);
    const failed = await waitForStatus(client, id, 'FAILED');
    expect(failed.statusReason).toMatch(/refused it: .*maxParallelism 32, the deployment 64/);
    const history = await client.get(`/v1/deployments/${id}/history`);
    expect(history.body.runs[0]).toMatchObject({ runNo: 1, outcome: 'FAILED', endReason: expect.stringContaining('maxParallelism') });

    // Asking for RUNNING again restarts it (and here it fails again, for the same reason).
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'RUNNING' })).status).toBe(200);
    const again = await waitForDeployment(client, id, 'failed again', (d) => d.status === 'FAILED' && d.runNo === 2);
    expect(again.statusReason).toMatch(/refused it/);

    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'SUSPENDED' })).status).toBe(200);
    await waitForStatus(client, id, 'SUSPENDED');
  });
});

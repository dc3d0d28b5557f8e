/**
 * Deployments carried out on real workers by two control-plane instances side by side (one database, one Redis):
 * exactly one run-subtasks per process reaches the worker; suspend stops it; resume starts it again; a worker killed without a
 * goodbye goes LOST and its deployment is re-placed on another worker.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { KafkaConnector } from '@weir/kafka';
import type { RunSubtasks, StopSubtasks } from '@weir/protocol';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eventChannel, type DeploymentStatusEvent } from '../../../apps/control-plane/src/events/events';
import type { WorkerApp } from '../../../apps/worker/src/worker-app';
import { adminHeaders, deleteQueues, deleteWorkers, eventually, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';
import { api, buildJob, deleteTopics, ensureTopics, insertBundle, spawnWorker, startWorker, waitForDeployment, waitForStatus, wordCountSource, type Api } from './support';

const HEARTBEAT_MS = 200;
const run = randomBytes(3).toString('hex');

describe('deployment dispatch', { timeout: 150_000 }, () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: String(HEARTBEAT_MS) });
  const workerIds = [`dw-a-${run}`, `dw-lost-${run}`, `dw-b-${run}`];
  let home: string;
  let instances: RunningControlPlane[] = [];
  let tenant: TestTenant;
  let kafka: KafkaConnector;
  let topics: string[];
  let bundleId: string;
  let bundleV2: string;
  let client: Api;
  /** The fleet is admin-only: the platform's view of one worker. */
  const workerStatus = async (id: string) => {
    const res = await fetch(`${instances[0].url}/v1/workers/${id}`, { headers: adminHeaders() });
    return res.status === 200 ? ((await res.json()) as { status: string }).status : undefined;
  };
  let viaOther: Api;
  const workers: WorkerApp[] = [];
  let lost: ChildProcess | undefined;
  const deployed: string[] = [];

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'weir-dispatch-'));
    tenant = await createTestTenant(config);
    topics = [`t.${tenant.tenantId}.words`, `t.${tenant.tenantId}.counts`];
    kafka = await ensureTopics(config, topics);
    const job = await buildJob(home, wordCountSource(topics[0], topics[1]));
    bundleId = await insertBundle(config, tenant.tenantId, job);
    bundleV2 = await insertBundle(config, tenant.tenantId, job, { version: '2.0.0' });
    instances = await Promise.all([startControlPlane(config), startControlPlane(config)]);
    client = api(() => instances[0].url, tenant.writeKey);
    viaOther = api(() => instances[1].url, tenant.writeKey);
  });

  afterAll(async () => {
    lost?.kill('SIGKILL');
    await Promise.all(instances.map((i) => i.close()));
    for (const w of workers) await w.stop('test finished').catch(() => undefined);
    await tenant?.cleanup();
    await deleteWorkers(config, workerIds);
    if (kafka) await deleteTopics(kafka, [...topics, ...deployed.map((id) => `weir.${tenant.tenantId}.${id}.dead-letters`)]);
    await deleteQueues(config);
    await rm(home, { recursive: true, force: true });
  });

  it('two instances send exactly one run-subtasks per process; suspend stops it, resume runs it again', async () => {
    const worker = await startWorker(config, workerIds[0], join(home, 'a'));
    workers.push(worker);
    const runs = vi.spyOn(worker.supervisor, 'run');
    const stops = vi.spyOn(worker.supervisor, 'stop');
    await eventually('worker registered', async () => ((await workerStatus(workerIds[0])) === 'ALIVE' ? true : undefined));

    // What GraphQL subscribers get: status changes on the tenant's Redis channel, from whichever instance moved it.
    const subscriber = new Redis(config.WEIR_REDIS_URL);
    const published: DeploymentStatusEvent[] = [];
    subscriber.on('pmessage', (_pattern, _channel, message: string) => published.push(JSON.parse(message) as DeploymentStatusEvent));
    await subscriber.psubscribe(eventChannel(config.WEIR_QUEUE_PREFIX, 'status', tenant.tenantId, '*'));

    const created = await client.post('/v1/deployments', { name: `wc-${run}`, bundleId, parallelism: { default: 1, operators: { counts: 2 } } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    deployed.push(id);
    expect(created.body).toMatchObject({ desiredState: 'RUNNING', bundleId, parallelism: { default: 1, operators: { counts: 2 } } });

    const running = await waitForStatus(viaOther, id, 'RUNNING');
    expect(running.runNo).toBe(1);
    // Both reconcilers kept looking at the deployment all along; the worker got one command per process (counts is
    // 2 wide: two processes, both on this worker's free slots).
    await new Promise((r) => setTimeout(r, 5 * HEARTBEAT_MS));
    expect(runs).toHaveBeenCalledTimes(2);
    const commands = runs.mock.calls.map((c) => c[0] as RunSubtasks).sort((a, b) => a.process!.index - b.process!.index);
    expect(commands[0]).toMatchObject({ idempotencyKey: `${id}-run-1`, tenantId: tenant.tenantId, jobId: id, maxParallelism: 32, process: { index: 0, count: 2 }, runNo: 1 });
    expect(commands[1]).toMatchObject({ idempotencyKey: `${id}-run-1-p1`, process: { index: 1, count: 2 }, runNo: 1 });
    expect(commands.map((c) => c.subtasks.filter((s) => s.operatorId === 'counts'))).toEqual([
      [{ operatorId: 'counts', subtask: 0, keyGroups: [[0, 15]] }],
      [{ operatorId: 'counts', subtask: 1, keyGroups: [[16, 31]] }],
    ]);
    expect(worker.supervisor.runningSubtasks().filter((s) => s.jobId === id).length).toBeGreaterThan(0);

    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'SUSPENDED' })).status).toBe(200);
    await waitForStatus(client, id, 'SUSPENDED');
    expect(stops).toHaveBeenCalledTimes(2);
    expect(stops.mock.calls.map((c) => (c[0] as StopSubtasks).idempotencyKey).sort()).toEqual([`${id}-run-1-p1-stop`, `${id}-run-1-stop`]);
    expect(worker.supervisor.runningSubtasks().filter((s) => s.jobId === id)).toEqual([]);

    expect((await viaOther.patch(`/v1/deployments/${id}`, { desiredState: 'RUNNING' })).status).toBe(200);
    const resumed = await waitForStatus(client, id, 'RUNNING');
    expect(resumed.runNo).toBe(2);
    expect(runs).toHaveBeenCalledTimes(4);
    await eventually('status events', async () => (published.length >= 6 ? true : undefined));
    // Two instances publish after their own commits: order by the transition time the events carry.
    published.sort((a, b) => a.at - b.at);
    expect(published.map((e) => [e.previousStatus, e.status])).toEqual([
      ['CREATED', 'STARTING'],
      ['STARTING', 'RUNNING'],
      ['RUNNING', 'STOPPING'],
      ['STOPPING', 'SUSPENDED'],
      ['SUSPENDED', 'STARTING'],
      ['STARTING', 'RUNNING'],
    ]);
    expect(published.every((e) => e.deploymentId === id && e.reason.length > 0)).toBe(true);
    subscriber.disconnect();

    const history = await client.get(`/v1/deployments/${id}/history`);
    expect(history.status).toBe(200);
    expect(history.body.transitions.map((t: { to: string }) => t.to)).toEqual(['CREATED', 'STARTING', 'RUNNING', 'STOPPING', 'SUSPENDED', 'STARTING', 'RUNNING']);
    expect(history.body.runs.map((r: { runNo: number; outcome: string | null; workerId: string }) => [r.runNo, r.outcome, r.workerId])).toEqual([
      [2, null, workerIds[0]],
      [1, 'STOPPED', workerIds[0]],
    ]);
    for (const t of history.body.transitions) expect(t.reason).toEqual(expect.any(String));

    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
    await waitForStatus(client, id, 'CANCELLED');
    expect(stops).toHaveBeenCalledTimes(4);
    const again = await client.patch(`/v1/deployments/${id}`, { desiredState: 'RUNNING' });
    expect(again.status).toBe(409);
    await worker.stop('make room for the next test');
    workers.splice(workers.indexOf(worker), 1);
  });

  it('a worker lost without a goodbye: RECOVERING, then RUNNING on another worker', async () => {
    lost = spawnWorker(config, workerIds[1], join(home, 'lost'));
    await eventually('the doomed worker registered', async () => ((await workerStatus(workerIds[1])) === 'ALIVE' ? true : undefined));
    const created = await client.post('/v1/deployments', { name: `wc-lost-${run}`, bundleId });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    deployed.push(id);
    await waitForStatus(client, id, 'RUNNING');

    const survivor = await startWorker(config, workerIds[2], join(home, 'b'));
    workers.push(survivor);
    lost.kill('SIGKILL');

    await waitForStatus(client, id, 'RECOVERING');
    const recovered = await waitForStatus(client, id, 'RUNNING');
    expect(recovered.runNo).toBe(2);
    expect(survivor.supervisor.runningSubtasks().some((s) => s.jobId === id && s.state === 'RUNNING')).toBe(true);

    const history = await client.get(`/v1/deployments/${id}/history`);
    const [second, first] = history.body.runs as { runNo: number; workerId: string; outcome: string | null; endReason: string }[];
    expect(first).toMatchObject({ runNo: 1, workerId: workerIds[1], outcome: 'LOST' });
    expect(second).toMatchObject({ runNo: 2, workerId: workerIds[2], outcome: null });
    const recovering = (history.body.transitions as { to: string; reason: string }[]).find((t) => t.to === 'RECOVERING')!;
    expect(recovering.reason).toBe(`worker ${workerIds[1]} is LOST (it hosted process 0 of run 1): re-placing the job, restoring its latest checkpoint`);

    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
    await waitForStatus(client, id, 'CANCELLED');
  });

  it('upgrades through UPGRADING (the reason says what happens to state) and rescales through RESCALING', async () => {
    const survivor = workers[workers.length - 1];
    const runs = vi.spyOn(survivor.supervisor, 'run');
    const created = await client.post('/v1/deployments', { name: `wc-up-${run}`, bundleId });
    const id = created.body.id as string;
    deployed.push(id);
    await waitForStatus(client, id, 'RUNNING');

    const upgrade = await client.post(`/v1/deployments/${id}/upgrade`, { bundle: { name: 'word-count', version: '2.0.0' }, mode: 'last-state' });
    expect(upgrade.status).toBe(202);
    const upgraded = await waitForDeployment(client, id, 'running v2', (d) => d.status === 'RUNNING' && d.bundleId === bundleV2);
    expect(upgraded.runNo).toBe(2);

    const rescale = await client.patch(`/v1/deployments/${id}`, { parallelism: { operators: { counts: 2 } } });
    expect(rescale.status).toBe(200);
    const rescaled = await waitForDeployment(client, id, 'rescaled', (d) => d.status === 'RUNNING' && d.runNo === 3);
    expect(rescaled).toMatchObject({ parallelism: { default: 1, operators: { counts: 2 } }, pendingParallelism: null, pendingUpgrade: null });
    const third = runs.mock.calls.map((c) => c[0] as RunSubtasks).filter((c) => c.runNo === 3);
    expect(third.map((c) => c.idempotencyKey).sort()).toEqual([`${id}-run-3`, `${id}-run-3-p1`]);
    expect(third.flatMap((c) => c.subtasks.filter((s) => s.operatorId === 'counts'))).toHaveLength(2);

    const history = await client.get(`/v1/deployments/${id}/history`);
    const transitions = history.body.transitions as { from: string; to: string; reason: string }[];
    expect(transitions.map((t) => t.to)).toEqual(['CREATED', 'STARTING', 'RUNNING', 'UPGRADING', 'RUNNING', 'RESCALING', 'RUNNING']);
    expect(transitions[3].reason).toMatch(new RegExp(`upgrade to bundle ${bundleV2} \\(mode last-state\\): `));
    const byNo = Object.fromEntries((history.body.runs as { runNo: number }[]).map((r) => [r.runNo, r]));
    expect(byNo[1]).toMatchObject({ bundleId, outcome: 'REPLACED', restoreFrom: null });
    expect(byNo[2]).toMatchObject({ bundleId: bundleV2, outcome: 'REPLACED' });
    expect(byNo[3]).toMatchObject({ bundleId: bundleV2, outcome: null });

    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
    await waitForStatus(client, id, 'CANCELLED');
  });
});

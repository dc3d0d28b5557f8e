/**
 * A failed deployment, end to end over HTTP with a real control plane, worker, Kafka and S3.
 * - A bundle that hard-codes another tenant's topic: the job host refuses it before it starts, and the deployment
 *   goes FAILED with a reason naming the topic and the allowed prefix.
 * - A job that fails while running (its job host SIGKILLed: the worker reports it FAILED) and is started again with
 *   PATCH RUNNING restores its latest checkpoint: a keyed running count/sum through an exactly-once sink continues
 *   exactly, record by record, as an uninterrupted run's. A restart with `resumeMode: stateless` starts without it.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBlobStore } from '@weir/blob';
import { sinkCommitsTopic } from '@weir/engine';
import type { KafkaConnector } from '@weir/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerApp } from '../../apps/worker/src/worker-app';
import { expectedOutput, inputRecords, type Output, readAll, sortOutputs, TOTALS_OPERATORS, totalsJobSource } from '../chaos/support';
import { api, buildJob, deleteTopics, ensureTopics, insertBundle, startWorker, waitForDeployment, waitForStatus, type Api } from '../control-plane/deployments/support';
import { deleteQueues, deleteWorkers, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../control-plane/support/control-plane';
import { createTestTenant, type TestTenant } from '../control-plane/support/tenants';

const run = randomBytes(3).toString('hex');
const STEP = 300;

interface Transition {
  to: string;
  reason: string;
}

/** SIGKILLs this process's job host children (never anyone else's): the worker then reports the job FAILED. */
function killJobHosts(): number {
  const children = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  const hosts = children.split('\n').filter((line) => line.includes('job-host')).map((line) => Number(line.trim().split(/\s+/)[0]));
  for (const pid of hosts) process.kill(pid, 'SIGKILL');
  return hosts.length;
}

describe('a failed deployment', { timeout: 180_000 }, () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: '500' });
  const workerId = `failed-worker-${run}`;
  const blob = createBlobStore(config);
  let home: string;
  let cp: RunningControlPlane;
  let worker: WorkerApp;
  let tenant: TestTenant;
  let kafka: KafkaConnector;
  let topics: { input: string; output: string };
  let client: Api;
  const ids: string[] = [];
  let sent = 0;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'weir-failed-'));
    tenant = await createTestTenant(config);
    topics = { input: `t.${tenant.tenantId}.in`, output: `t.${tenant.tenantId}.out` };
    kafka = await ensureTopics(config, [topics.input, topics.output], 2);
    cp = await startControlPlane(config);
    worker = await startWorker(config, workerId, join(home, 'worker'));
    client = api(() => cp.url, tenant.writeKey);
  });

  afterAll(async () => {
    await worker?.stop('test finished').catch(() => undefined);
    await cp?.close();
    if (tenant) for await (const info of blob.list(`tenants/${tenant.tenantId}/`)) await blob.delete(info.key);
    blob.close();
    await tenant?.cleanup();
    await deleteWorkers(config, [workerId]);
    if (kafka) {
      const internal = ids.flatMap((id) => [sinkCommitsTopic(tenant.tenantId, id), `weir.${tenant.tenantId}.${id}.dead-letters`]);
      await deleteTopics(kafka, [topics.input, topics.output, ...internal]);
    }
    await deleteQueues(config);
    await rm(home, { recursive: true, force: true });
  });

  const deploy = async (bundleId: string, name: string): Promise<string> => {
    const created = await client.post('/v1/deployments', {
      name,
      bundleId,
      parallelism: { default: 2, operators: {} },
      config: { properties: { 'checkpoint.interval-ms': '300', 'sink.delivery': 'exactly-once' } },
    });
    expect(created.status).toBe(201);
    ids.push(created.body.id as string);
    return created.body.id as string;
  };
  const transitions = async (id: string) => ((await client.get(`/v1/deployments/${id}/history?limit=100`)).body as { transitions: Transition[] }).transitions;
  const lastTo = async (id: string, status: string) => (await transitions(id)).filter((t) => t.to === status).at(-1)!;

  async function send(): Promise<void> {
    const writer = kafka.writer({ writerId: `failed-${run}-${sent}` });
    await writer.start();
    await writer.send(inputRecords(topics.input, sent, sent + STEP, 2));
    await writer.close();
    sent += STEP;
  }

  async function expectExactOutput(): Promise<void> {
    const records = await readAll(kafka, topics.output, 2, (n) => n >= sent, 45_000);
    const outputs = sortOutputs(records.map((r) => JSON.parse(r.value!.toString()) as Output));
    expect(outputs.length).toBe(sent);
    expect(outputs).toEqual(expectedOutput(sent));
  }

  it("a bundle on another tenant's topic fails at the job host, the reason naming the topic and the prefix", async () => {
    const foreign = `t.u${run}.in`;
    const admin = kafka.admin();
    await admin.ensureTopics([{ topic: foreign, partitions: 1 }]); // exists: only the refusal may stop the job
    await admin.close();
    const job = await buildJob(home, totalsJobSource(foreign, topics.output));
    // The manifest lists no topics, so the control plane cannot see the hard-coded one: the job host must.
    const bundleId = await insertBundle(config, tenant.tenantId, job, { name: 'sneaky', operatorIds: TOTALS_OPERATORS });
    const id = await deploy(bundleId, `sneaky-${run}`);
    const failed = await waitForStatus(client, id, 'FAILED', 60_000);
    expect(failed.statusReason).toContain(`source "in" reads topic "${foreign}", outside the tenant's namespace`);
    expect(failed.statusReason).toContain(`only topics starting with "t.${tenant.tenantId}."`);
    expect((await lastTo(id, 'FAILED')).reason).toContain(`topic "${foreign}"`);
    await deleteTopics(kafka, [foreign]);
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
  });

  it('a job that failed restarts from its latest checkpoint on PATCH RUNNING: totals continue exactly', async () => {
    const job = await buildJob(home, totalsJobSource(topics.input, topics.output));
    const bundleId = await insertBundle(config, tenant.tenantId, job, { name: 'totals', operatorIds: TOTALS_OPERATORS, topics: [topics.input, topics.output] });
    const id = await deploy(bundleId, `totals-${run}`);
    await waitForStatus(client, id, 'RUNNING', 60_000);
    await send();
    await expectExactOutput(); // exactly-once output is visible only once a checkpoint covering it completed

    expect(killJobHosts()).toBe(1);
    const failed = await waitForStatus(client, id, 'FAILED', 60_000);
    expect(failed.statusReason).toMatch(/reports the job FAILED .*; a restart restores the job's latest usable checkpoint \(checkpoint \d+ as it stopped\)$/);
    expect((await client.get(`/v1/deployments/${id}`)).body.pendingRestore).toMatchObject({ snapshotId: 'latest', origin: 'kept' });

    await send(); // arrives while failed: the restarted job reads it from the checkpoint's offsets
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'RUNNING' })).status).toBe(200);
    await waitForDeployment(client, id, 'running run 2', (d) => d.status === 'RUNNING' && d.runNo === 2, 60_000);
    expect((await lastTo(id, 'STARTING')).reason).toMatch(/^desired state RUNNING set again after the failure: restarting from the job's latest usable checkpoint/);
    expect((await lastTo(id, 'RUNNING')).reason).toMatch(/restored the job's latest usable checkpoint$/);
    await expectExactOutput();

    // resumeMode stateless after a failure: the kept state is dropped and the run starts without it.
    expect(killJobHosts()).toBe(1);
    await waitForStatus(client, id, 'FAILED', 60_000);
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'RUNNING', resumeMode: 'stateless' })).status).toBe(200);
    await waitForDeployment(client, id, 'running run 3', (d) => d.status === 'RUNNING' && d.runNo === 3, 60_000);
    expect((await lastTo(id, 'STARTING')).reason).toBe('desired state RUNNING set again after the failure: restarting without state');
    expect((await lastTo(id, 'RUNNING')).reason).toMatch(/started without state$/);
  });
});

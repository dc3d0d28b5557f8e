/**
 * A failed deployment, and a lost one, end to end over HTTP with a real control plane, workers, Kafka and S3.
 * - A bundle that hard-codes another tenant's topic: the job host refuses it before it starts, and the deployment
 *   goes FAILED with a reason naming the topic and the allowed prefix.
 * - A job host SIGKILLed while the job runs in two processes: the worker reports it LOST (not FAILED: nothing says
 *   the job cannot run), so the whole run is re-placed without a human and restores its latest checkpoint; a keyed
 *   running count/sum through an exactly-once sink continues exactly, record by record, as an uninterrupted run's.
 * - The same deployment with no worker left: no run can be placed within its placement.timeout-ms, so it goes FAILED
 *   keeping its latest checkpoint; PATCH RUNNING (once a worker is back) restores it and the totals continue exactly.
 *   A restart with `resumeMode: stateless` starts without it.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { TOTALS_OPERATORS, totalsJobSource } from '../chaos/support';
import { buildJob, deleteTopics, insertBundle, waitForDeployment, waitForStatus } from '../control-plane/deployments/support';
import { platformFixture } from '../support/platform';
import { totalsFlow } from './totals-flow';

const STEP = 300;

interface Transition {
  to: string;
  reason: string;
}

/** The job host children of this process (never anyone else's), by pid. */
function jobHosts(): number[] {
  const children = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  return children.split('\n').filter((line) => line.includes('job-host')).map((line) => Number(line.trim().split(/\s+/)[0]));
}

describe('a failed deployment', { timeout: 180_000 }, () => {
  const platform = platformFixture({ name: 'failed', topics: { input: 'in', output: 'out' }, partitions: 2 });
  const { run } = platform;
  const flow = totalsFlow(platform, STEP);
  const { send, expectExactOutput } = flow;

  const transitions = async (id: string) => ((await platform.client.get(`/v1/deployments/${id}/history?limit=100`)).body as { transitions: Transition[] }).transitions;
  const lastTo = async (id: string, status: string) => (await transitions(id)).filter((t) => t.to === status).at(-1)!;

  it("a bundle on another tenant's topic fails at the job host, the reason naming the topic and the prefix", async () => {
    const { client, config, home, kafka, tenant, topics } = platform;
    const foreign = `t.u${run}.in`;
    const admin = kafka.admin();
    await admin.ensureTopics([{ topic: foreign, partitions: 1 }]); // exists: only the refusal may stop the job
    await admin.close();
    const job = await buildJob(home, totalsJobSource(foreign, topics.output));
    // The manifest lists no topics, so the control plane cannot see the hard-coded one: the job host must.
    const bundleId = await insertBundle(config, tenant.tenantId, job, { name: 'sneaky', operatorIds: TOTALS_OPERATORS });
    const id = await flow.deploy(bundleId, `sneaky-${run}`);
    const failed = await waitForStatus(client, id, 'FAILED', 60_000);
    expect(failed.statusReason).toContain(`source "in" reads topic "${foreign}", outside the tenant's namespace`);
    expect(failed.statusReason).toContain(`only topics starting with "t.${tenant.tenantId}."`);
    expect((await lastTo(id, 'FAILED')).reason).toContain(`topic "${foreign}"`);
    await deleteTopics(kafka, [foreign]);
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
  });

  let id: string;

  it('a job host killed without a word (LOST) is recovered from the latest checkpoint without a human: totals continue exactly', async () => {
    const { client } = platform;
    id = await platform.deploy({
      name: `totals-${run}`,
      bundleId: await flow.bundle(),
      parallelism: { default: 2, operators: {} },
      config: { properties: { 'checkpoint.interval-ms': '300', 'sink.delivery': 'exactly-once', 'placement.timeout-ms': '3000' } },
    });
    await waitForStatus(client, id, 'RUNNING', 60_000);
    await send();
    await expectExactOutput(); // exactly-once output is visible only once a checkpoint covering it completed

    // Parallelism 2: two processes, two job hosts. One dies: the whole run is re-placed, never FAILED.
    const hosts = jobHosts();
    expect(hosts).toHaveLength(2);
    process.kill(hosts[0], 'SIGKILL');
    await waitForDeployment(client, id, 'running run 2', (d) => d.status === 'RUNNING' && d.runNo === 2, 90_000);
    const seen = await transitions(id);
    expect(seen.map((t) => t.to)).toEqual(['CREATED', 'STARTING', 'RUNNING', 'RECOVERING', 'RUNNING']);
    expect(seen[3].reason).toMatch(/^process \d of run 1 on worker \S+ was lost: its job host died without reporting a failure/);
    expect(seen[4].reason).toMatch(/restored the job's latest usable checkpoint$/);
    await send();
    await expectExactOutput();
  });

  it('with no worker left it goes FAILED after placement.timeout-ms, and restarts from its latest checkpoint on PATCH RUNNING', async () => {
    const { client } = platform;
    await platform.worker.stop('leaving the deployment without a worker');
    const failed = await waitForStatus(client, id, 'FAILED', 60_000);
    expect(failed.statusReason).toMatch(
      /^no run could be placed within 3 s: waiting for 2 free slots: the fleet has no live worker; a restart restores the job's latest usable checkpoint \(checkpoint \d+ as it stopped\)$/,
    );
    expect((await client.get(`/v1/deployments/${id}`)).body.pendingRestore).toMatchObject({ snapshotId: 'latest', origin: 'kept' });

    await send(); // arrives while failed: the restarted job reads it from the checkpoint's offsets
    const worker2 = await platform.startWorker('worker2');
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'RUNNING' })).status).toBe(200);
    await waitForDeployment(client, id, 'running run 3', (d) => d.status === 'RUNNING' && d.runNo === 3, 60_000);
    expect((await lastTo(id, 'STARTING')).reason).toMatch(/^desired state RUNNING set again after the failure: restarting from the job's latest usable checkpoint/);
    expect((await lastTo(id, 'RUNNING')).reason).toMatch(/restored the job's latest usable checkpoint$/);
    await expectExactOutput();

    // resumeMode stateless after a failure: the kept state is dropped and the run starts without it.
    await worker2.stop('leaving the deployment without a worker again');
    await waitForStatus(client, id, 'FAILED', 60_000);
    await platform.startWorker('worker3');
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'RUNNING', resumeMode: 'stateless' })).status).toBe(200);
    await waitForDeployment(client, id, 'running run 4', (d) => d.status === 'RUNNING' && d.runNo === 4, 60_000);
    expect((await lastTo(id, 'STARTING')).reason).toBe('desired state RUNNING set again after the failure: restarting without state');
    expect((await lastTo(id, 'RUNNING')).reason).toMatch(/started without state$/);
  });
});

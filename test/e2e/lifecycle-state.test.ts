/**
 * State across a deployment's lifecycle, end to end over HTTP with a real control plane, worker, Kafka and S3: a
 * keyed running count/sum with an exactly-once sink (every output record carries its key's totals, so lost or
 * repeated state shows as wrong numbers) is suspended and resumed (from the savepoint its stop took), suspended
 * while S3 refuses the job (no savepoint: the resume restores the latest checkpoint), stopped with a savepoint that
 * fails (it keeps running; the savepoint says FAILED), stopped with one that works, and restored while running in
 * one call, and upgraded with a savepoint. After every step the committed output equals an uninterrupted run's,
 * record by record.
 */
import { Pool } from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { waitForDeployment, waitForStatus, type Api } from '../control-plane/deployments/support';
import { eventually } from '../control-plane/support/control-plane';
import { platformFixture } from '../support/platform';
import { startS3Gate, type S3Gate } from './s3-gate';
import { totalsFlow } from './totals-flow';

const STEP = 400;

interface Transition {
  from: string;
  to: string;
  reason: string;
}

describe('deployment lifecycle keeps state', { timeout: 240_000 }, () => {
  let gate: S3Gate;
  // Heartbeats every 500 ms (the fixture's default): a loaded machine stalling the test process for 750 ms must not
  // make a LOST worker.
  const platform = platformFixture({
    name: 'life',
    topics: { input: 'in', output: 'out' },
    partitions: 2,
    // The worker (and with it its job hosts, whose object store is the worker's) reaches S3 through the gate; the
    // control plane does not. Bundles are fetched while the gate is open.
    beforeStart: async () => {
      gate = await startS3Gate(platform.config.WEIR_S3_ENDPOINT!);
    },
    workerSettings: () => ({ WEIR_S3_ENDPOINT: gate.url }),
    beforeStop: async () => gate?.open(),
    afterStop: async () => {
      await gate?.close();
    },
  });
  const flow = totalsFlow(platform, STEP);
  const { send, expectExactOutput } = flow;
  let client: Api;
  let id: string | undefined;
  let v2: string;

  beforeAll(() => {
    client = platform.client;
  });

  const deployment = async () => (await client.get(`/v1/deployments/${id}`)).body;
  const history = async () => (await client.get(`/v1/deployments/${id}/history?limit=100`)).body as { runs: { runNo: number; restoreFrom: { snapshotId: string } | null }[]; transitions: Transition[] };
  const lastTransitionTo = async (status: string) => (await history()).transitions.filter((t) => t.to === status).at(-1)!;
  const resume = async (runNo: number, body: Record<string, unknown> = {}) => {
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'RUNNING', ...body })).status).toBe(200);
    return waitForDeployment(client, id!, `running run ${runNo}`, (d) => d.status === 'RUNNING' && d.runNo === runNo, 60_000);
  };

  it('suspend stops with a savepoint; resume restores it: totals continue exactly', async () => {
    const bundleId = await flow.bundle();
    v2 = await flow.bundle('2.0.0');
    id = await flow.deploy(bundleId, `totals-${platform.run}`);
    await waitForStatus(client, id, 'RUNNING', 60_000);
    await send();
    await expectExactOutput();

    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'SUSPENDED' })).status).toBe(200);
    const suspended = await waitForStatus(client, id, 'SUSPENDED', 60_000);
    expect(suspended.statusReason).toMatch(/^run 1 stopped on worker .*; a resume restores savepoint suspend-run-1 \(checkpoint \d+, taken as run 1 stopped\)$/);
    expect((await deployment()).pendingRestore).toMatchObject({ snapshotId: 'suspend-run-1', origin: 'kept' });
    const savepoints = await client.get(`/v1/deployments/${id}/savepoints`);
    expect(savepoints.body.items.map((s: { savepointId: string }) => s.savepointId)).toContain('suspend-run-1');

    await send(); // arrives while suspended: the resumed job reads it from the savepoint's offsets
    await resume(2);
    expect((await lastTransitionTo('STARTING')).reason).toMatch(/^desired state RUNNING: resuming from savepoint suspend-run-1 /);
    expect((await lastTransitionTo('RUNNING')).reason).toMatch(/restored savepoint suspend-run-1$/);
    expect((await history()).runs[0]).toMatchObject({ runNo: 2, restoreFrom: { snapshotId: 'suspend-run-1' } });
    expect((await deployment()).pendingRestore).toBeNull();
    await expectExactOutput();
    // Figures for docs/deployments.md (printed, never asserted): how long the stop with its savepoint and the
    // restoring start took, from the transitions' own times.
    const t = (await history()).transitions as (Transition & { at: string })[];
    const at = (to: string) => Date.parse(t.find((x) => x.to === to && (to !== 'RUNNING' || x.from === 'STARTING') && t.indexOf(x) > 2)!.at);
    console.info(`[lifecycle] STOPPING→SUSPENDED ${at('SUSPENDED') - at('STOPPING')} ms; STARTING→RUNNING (restore) ${at('RUNNING') - at('STARTING')} ms`);
  });

  it('suspend while S3 refuses the job: stopped without a savepoint, the resume restores the latest checkpoint', async () => {
    await send();
    await expectExactOutput();
    gate.shut();
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'SUSPENDED' })).status).toBe(200);
    const suspended = await waitForStatus(client, id!, 'SUSPENDED', 60_000);
    gate.open();
    expect(suspended.statusReason).toMatch(/a resume restores the job's latest usable checkpoint \(checkpoint \d+ as it stopped\); savepoint suspend-run-2 failed: /);
    expect((await deployment()).pendingRestore).toMatchObject({ snapshotId: 'latest', origin: 'kept' });

    await send();
    await resume(3);
    expect((await lastTransitionTo('STARTING')).reason).toMatch(/^desired state RUNNING: resuming from the job's latest usable checkpoint \(checkpoint \d+/);
    expect((await history()).runs[0]).toMatchObject({ runNo: 3, restoreFrom: { snapshotId: 'latest' } });
    await expectExactOutput();
  });

  it('stop-with-savepoint that fails: the savepoint is FAILED, the deployment keeps running; one that works suspends it', async () => {
    gate.shut();
    const failing = await client.post(`/v1/deployments/${id}/savepoints`, { savepointId: 'sp-refused', stop: true });
    expect(failing.status).toBe(202);
    expect((await deployment()).pendingStopSavepointId).toBe('sp-refused');
    const failed = await eventually('the savepoint FAILED', async () => {
      const res = await client.get(`/v1/deployments/${id}/savepoints/sp-refused`);
      return res.body?.state === 'FAILED' ? res.body : undefined;
    }, { timeoutMs: 60_000, everyMs: 100 });
    expect(failed.failureReason).toMatch(/savepoint sp-refused failed/);
    const stillRunning = await waitForDeployment(client, id!, 'the failed stop forgotten', (d) => (d as unknown as { pendingStopSavepointId: string | null }).pendingStopSavepointId === null);
    expect(stillRunning).toMatchObject({ status: 'RUNNING', desiredState: 'RUNNING', runNo: 3 });
    expect(stillRunning.statusReason).toMatch(/^stop-with-savepoint sp-refused failed, so the job keeps running: /);
    gate.open();
    await send(); // the job still runs: this is counted once S3 takes its checkpoints again
    await expectExactOutput();

    // A stop recorded two minutes ago whose command never reached the worker (the control plane died between the
    // two): the reconciler finds no such command in the worker's queue and forgets the stop; the job keeps running.
    const owner = new Pool({ connectionString: platform.config.WEIR_PG_OWNER_URL, max: 1 });
    try {
      const lost = { savepointId: 'sp-lost', runNo: 3, requestedAt: new Date(Date.now() - 120_000).toISOString() };
      await owner.query(`UPDATE deployments SET pending_stop = $2, next_reconcile_at = now() WHERE id = $1`, [id, lost]);
    } finally {
      await owner.end();
    }
    const notLost = await waitForDeployment(client, id!, 'the lost stop forgotten', (d) => (d as unknown as { pendingStopSavepointId: string | null }).pendingStopSavepointId === null);
    expect(notLost).toMatchObject({ status: 'RUNNING', desiredState: 'RUNNING', runNo: 3 });
    expect(notLost.statusReason).toMatch(/^stop-with-savepoint sp-lost was lost: its command is not in worker .*'s queue 12\d s after the request/);
    expect((await client.get(`/v1/deployments/${id}/savepoints/sp-lost`)).status).toBe(404);

    const stop = await client.post(`/v1/deployments/${id}/savepoints`, { savepointId: 'sp-stop', stop: true });
    expect(stop.status).toBe(202);
    const suspended = await waitForStatus(client, id!, 'SUSPENDED', 60_000);
    expect(suspended.desiredState).toBe('SUSPENDED');
    expect(suspended.statusReason).toMatch(/^run 3 stopped with savepoint sp-stop on worker .* \(stop-with-savepoint\); a resume restores savepoint sp-stop/);
    expect((await client.get(`/v1/deployments/${id}/savepoints/sp-stop`)).body.state).toBe('COMPLETED');

    await send();
    await resume(4);
    expect((await history()).runs[0]).toMatchObject({ runNo: 4, restoreFrom: { snapshotId: 'sp-stop' } });
    await expectExactOutput();
  });

  it('restore a running deployment in one call: it stops and starts from the savepoint', async () => {
    // A savepoint of everything so far: restoring it rewinds nothing that is not replayed exactly.
    expect((await client.post(`/v1/deployments/${id}/savepoints`, { savepointId: 'sp-now' })).status).toBe(202);
    await eventually('sp-now', async () => ((await client.get(`/v1/deployments/${id}/savepoints/sp-now`)).body?.state === 'COMPLETED' ? true : undefined), {
      timeoutMs: 60_000,
      everyMs: 100,
    });
    const restored = await client.post(`/v1/deployments/${id}/savepoints/sp-now/restore`, {});
    expect(restored.status).toBe(202);
    expect(restored.body.pendingRestore).toMatchObject({ snapshotId: 'sp-now', origin: 'requested' });
    await waitForDeployment(client, id!, 'running run 5', (d) => d.status === 'RUNNING' && d.runNo === 5, 60_000);
    expect((await lastTransitionTo('UPGRADING')).reason).toMatch(/^restore requested \(savepoint sp-now \(checkpoint \d+\)\): stopping run 4/);
    expect((await history()).runs[0]).toMatchObject({ runNo: 5, restoreFrom: { snapshotId: 'sp-now' } });
    await send();
    await expectExactOutput();
  });

  it('a savepoint upgrade stops the running version with a savepoint and starts the new one from it', async () => {
    expect((await client.post(`/v1/deployments/${id}/upgrade`, { bundleId: v2, mode: 'savepoint' })).status).toBe(202);
    await waitForDeployment(client, id!, 'running v2', (d) => d.status === 'RUNNING' && d.runNo === 6 && d.bundleId === v2, 60_000);
    expect((await history()).runs[0]).toMatchObject({ runNo: 6, restoreFrom: { snapshotId: 'upgrade-run-5' } });
    expect((await lastTransitionTo('RUNNING')).reason).toMatch(/restored savepoint upgrade-run-5$/);
    await send();
    await expectExactOutput();
  });

  it('resumeMode stateless starts without the kept state; old lifecycle savepoints go; CANCELLED cannot be restored', async () => {
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'SUSPENDED', resumeMode: 'stateless' })).status).toBe(400);
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'SUSPENDED' })).status).toBe(200);
    await waitForStatus(client, id!, 'SUSPENDED', 60_000);
    expect((await deployment()).pendingRestore).toMatchObject({ snapshotId: 'suspend-run-6' });
    await resume(7, { resumeMode: 'stateless' });
    expect((await lastTransitionTo('STARTING')).reason).toBe('desired state RUNNING: resuming without state (none was kept)');
    expect((await history()).runs[0]).toMatchObject({ runNo: 7, restoreFrom: null });

    // A fourth savepoint of the reconciler's own: the oldest of them goes, the tenant's stay.
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'SUSPENDED' })).status).toBe(200);
    await waitForStatus(client, id!, 'SUSPENDED', 60_000);
    const listed = (await client.get(`/v1/deployments/${id}/savepoints`)).body.items.map((s: { savepointId: string }) => s.savepointId).sort();
    expect(listed).toEqual(['sp-now', 'sp-stop', 'suspend-run-6', 'suspend-run-7', 'upgrade-run-5']);

    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
    await waitForStatus(client, id!, 'CANCELLED', 60_000);
    const refused = await client.post(`/v1/deployments/${id}/savepoints/sp-now/restore`, {});
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/cancelled/);
  });
});

/**
 * Recovery end to end: a deployment with an exactly-once sink runs on a worker process that is killed (SIGKILL, no
 * goodbye); the reconciler declares it LOST, re-places the run on another worker with restoreFrom "latest", the new
 * job host restores the latest checkpoint, and the committed output equals an uninterrupted run's. Then that worker
 * shuts down cleanly: its deployment is re-placed too (RECOVERING), never taken for a job that ended on its own.
 */
import { CheckpointStore } from '@weir/checkpoint';
import { createBlobStore } from '@weir/blob';
import { describe, expect, it } from 'vitest';
import type { WorkerApp } from '../../apps/worker/src/worker-app';
import { waitForDeployment, waitForStatus } from '../control-plane/deployments/support';
import { adminHeaders, eventually } from '../control-plane/support/control-plane';
import { totalsFlow } from '../e2e/totals-flow';
import { platformFixture } from '../support/platform';

const RECORDS = 8_000;

interface Run {
  runNo: number;
  workerId: string;
  outcome: string | null;
  endReason: string | null;
  restoreFrom: { snapshotId: string } | null;
}

describe('worker loss with an exactly-once sink', { timeout: 150_000 }, () => {
  // Heartbeats every second (LOST after 3 s of silence): the loss is noticed within seconds, and a loaded 2-core
  // machine stalling a worker or the control plane's consumer for ~0.7 s (seen at 200 ms heartbeats) cannot make a
  // live worker LOST, whose run would then be re-placed once more (a false loss is a loss to the control plane).
  const platform = platformFixture({ name: 'loss', heartbeatMs: 1_000, workers: 0, topics: { input: 'in', output: 'out' }, partitions: 2 });
  const flow = totalsFlow(platform, RECORDS / 4);
  let survivor: WorkerApp;
  let id: string;

  const history = async () => (await platform.client.get(`/v1/deployments/${id}/history?limit=100`)).body as { runs: Run[]; transitions: { to: string; reason: string }[] };
  const runs = async () => (await history()).runs;

  it('SIGKILL of the worker: exactly one new run, on the survivor, restored from the latest checkpoint, output exact', async () => {
    const { client } = platform;
    const workerStatus = async (workerId: string) => {
      const res = await fetch(`${platform.cp.url}/v1/workers/${workerId}`, { headers: adminHeaders() });
      return res.status === 200 ? ((await res.json()) as { status: string }).status : undefined;
    };
    const doomed = platform.spawnWorker('doomed');
    await eventually('the doomed worker registered', async () => ((await workerStatus(platform.workerId('doomed'))) === 'ALIVE' ? true : undefined));
    id = await flow.deploy(await flow.bundle(), `totals-${platform.run}`);
    await waitForStatus(client, id, 'RUNNING');

    await flow.send(RECORDS / 2);
    const blob = createBlobStore(platform.config);
    try {
      const store = new CheckpointStore(blob);
      await eventually('a checkpoint on S3', async () => {
        const latest = await store.latest({ tenantId: platform.tenant.tenantId, jobId: id });
        return latest && latest.manifest.checkpointId >= 3 ? latest : undefined;
      }, { timeoutMs: 30_000, everyMs: 100 });
    } finally {
      blob.close();
    }
    await flow.send();

    survivor = await platform.startWorker('survivor');
    // The run the kill hits: the reconciler owes exactly one new run for it.
    const [killed] = await runs();
    expect(killed).toMatchObject({ workerId: platform.workerId('doomed'), outcome: null });
    doomed.kill('SIGKILL');
    await waitForStatus(client, id, 'RECOVERING');
    const recovered = await waitForDeployment(client, id, 'running again', (d) => d.status === 'RUNNING' && d.runNo > killed.runNo, 60_000);
    expect(recovered.runNo).toBe(killed.runNo + 1);
    const [next, lost] = await runs();
    expect(lost).toMatchObject({ runNo: killed.runNo, outcome: 'LOST', endReason: expect.stringContaining(`worker ${platform.workerId('doomed')} is no longer alive`) });
    expect(next).toMatchObject({ runNo: killed.runNo + 1, workerId: platform.workerId('survivor'), outcome: null, restoreFrom: { snapshotId: 'latest' } });

    await flow.send();
    await flow.expectExactOutput(30_000);
  });

  it("a worker's clean shutdown re-places its deployment (RECOVERING), not FINISHED", async () => {
    const before = (await platform.client.get(`/v1/deployments/${id}`)).body as { runNo: number };
    // A shutdown stops the jobs before the goodbye: meanwhile the heartbeats must still name them (STOPPING), or the
    // control plane would read a job that ended on its own.
    await survivor.supervisor.close();
    await eventually('the heartbeat naming the stopped job STOPPING', async () => {
      const res = await fetch(`${platform.cp.url}/v1/workers/${platform.workerId('survivor')}`, { headers: adminHeaders() });
      const { runningSubtasks } = (await res.json()) as { runningSubtasks: { jobId: string; state: string }[] };
      const mine = runningSubtasks.filter((s) => s.jobId === id);
      return mine.length > 0 && mine.every((s) => s.state === 'STOPPING') ? true : undefined;
    });
    await survivor.stop('shutting down');
    await waitForStatus(platform.client, id, 'RECOVERING');
    const { transitions } = await history();
    expect(transitions.filter((t) => t.to === 'RECOVERING').at(-1)?.reason).toContain(`worker ${platform.workerId('survivor')} is STOPPED`);
    // RUNNING → RECOVERING is one step, writing the run off the next: the outcome may follow the status by a moment.
    const stopped = await eventually('the run written off as LOST', async () => {
      const run = (await runs()).find((r) => r.runNo === before.runNo);
      return run?.outcome === 'LOST' ? run : undefined;
    });
    expect(stopped).toMatchObject({ runNo: before.runNo, outcome: 'LOST' });
    expect((await platform.client.patch(`/v1/deployments/${id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
    await waitForStatus(platform.client, id, 'CANCELLED');
  });
});

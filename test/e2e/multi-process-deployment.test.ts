/**
 * A real deployment in three job host processes on two workers, end to end through the control plane: the keyed
 * totals job (exactly-once sink, checkpoints every 300 ms) at `totals` parallelism 3 is placed as processes 0 and 1
 * on worker a (2 slots) and process 2 on worker b (1 slot), keyed records crossing between them through the Kafka
 * exchange; the layout is what REST shows. Worker b is SIGKILLed: its process is gone, so the whole run is written
 * off, the survivors on a are stopped, and run 2 is placed on a and on worker c (the only free slots), restoring the
 * latest checkpoint. The committed output equals an uninterrupted run's, record by record.
 */
import { CheckpointStore } from '@weir/checkpoint';
import { createBlobStore } from '@weir/blob';
import { describe, expect, it } from 'vitest';
import { waitForDeployment, waitForStatus } from '../control-plane/deployments/support';
import { adminHeaders, eventually } from '../control-plane/support/control-plane';
import { platformFixture } from '../support/platform';
import { totalsFlow } from './totals-flow';

const RECORDS = 6_000;

interface Layout {
  runNo: number;
  processes: { index: number; workerId: string; subtasks: { operatorId: string; subtask: number }[] }[];
}

describe('a deployment over three processes on two workers', { timeout: 240_000 }, () => {
  // Spawned workers (b) get one slot; the in-process ones their own count. Heartbeats every second: a loaded
  // machine's stalls must not make a live worker LOST (that would be one more run than the test expects).
  const platform = platformFixture({ name: 'mproc', heartbeatMs: 1_000, workers: 0, workerSlots: 1, topics: { input: 'in', output: 'out' }, partitions: 2 });
  const flow = totalsFlow(platform, RECORDS / 3);

  it('runs spread over the workers, survives the loss of one of them, and stays exact', async () => {
    const { client } = platform;
    const alive = async (role: string) => {
      const res = await fetch(`${platform.cp.url}/v1/workers/${platform.workerId(role)}`, { headers: adminHeaders() });
      return res.status === 200 && ((await res.json()) as { status: string }).status === 'ALIVE' ? true : undefined;
    };
    await platform.startWorker('a', 2);
    const doomed = platform.spawnWorker('b');
    await eventually('worker b registered', () => alive('b'));

    const id = await platform.deploy({
      name: `mproc-${platform.run}`,
      bundleId: await flow.bundle(),
      parallelism: { default: 1, operators: { totals: 3 } },
      config: { properties: { 'checkpoint.interval-ms': '300', 'sink.delivery': 'exactly-once' } },
    });
    const running = await waitForStatus(client, id, 'RUNNING', 90_000);
    expect(running.statusReason).toMatch(new RegExp(`^run 1: \\d+ subtasks running on 3 processes \\(0, 1 on worker ${platform.workerId('a')}; 2 on worker ${platform.workerId('b')}\\)`));
    const layout = (await client.get(`/v1/deployments/${id}`)).body.layout as Layout;
    expect(layout.processes.map((p) => [p.index, p.workerId, p.subtasks.filter((s) => s.operatorId === 'totals').map((s) => s.subtask)])).toEqual([
      [0, platform.workerId('a'), [0]],
      [1, platform.workerId('a'), [1]],
      [2, platform.workerId('b'), [2]],
    ]);

    await flow.send();
    const blob = createBlobStore(platform.config);
    try {
      const store = new CheckpointStore(blob);
      await eventually('a checkpoint of the three processes on S3', async () => {
        const latest = await store.latest({ tenantId: platform.tenant.tenantId, jobId: id });
        return latest && latest.manifest.checkpointId >= 2 ? latest : undefined;
      }, { timeoutMs: 60_000, everyMs: 200 });
    } finally {
      blob.close();
    }
    await flow.send();

    // The only free slot once b is gone: c's. Run 2 must go to a (2) and c (1).
    await platform.startWorker('c', 1);
    doomed.kill('SIGKILL');
    const recovered = await waitForDeployment(client, id, 'run 2 running', (d) => d.status === 'RUNNING' && d.runNo === 2, 120_000);
    expect(recovered.statusReason).toMatch(/restored the job's latest usable checkpoint$/);
    const history = (await client.get(`/v1/deployments/${id}/history?limit=100`)).body as {
      runs: { runNo: number; outcome: string | null; endReason: string | null; processes: { workerId: string }[] }[];
      transitions: { to: string; reason: string }[];
    };
    const [second, first] = history.runs;
    expect(first).toMatchObject({ runNo: 1, outcome: 'LOST', endReason: `worker ${platform.workerId('b')} is no longer alive (LOST) while hosting process 2 of run 1` });
    expect(second.processes.map((p) => p.workerId)).toEqual([platform.workerId('a'), platform.workerId('a'), platform.workerId('c')]);
    expect(history.transitions.filter((t) => t.to === 'RECOVERING').map((t) => t.reason)).toEqual([
      `worker ${platform.workerId('b')} is LOST (it hosted process 2 of run 1): re-placing the job, restoring its latest checkpoint`,
    ]);

    await flow.send();
    await flow.expectExactOutput(60_000);
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
    await waitForStatus(client, id, 'CANCELLED', 60_000);
  });
});

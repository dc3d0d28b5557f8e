/**
 * A live key-group move of a real deployment, end to end through the control plane: the keyed totals job (exactly-
 * once sink, checkpoints every 300 ms) in two job host processes, process 0 on worker a and process 1 on worker b.
 * While records flow, POST …/key-group-moves moves three key groups of `totals` from subtask 0 to subtask 1 and one
 * back; the move is DONE with the workers' report (bytes and pause per key group), the layout over REST shows the key
 * groups where they are now, and the committed output equals an uninterrupted run's. Then worker b is SIGKILLed: run
 * 2 (on a and c) starts with the moved routing (its run-subtasks on the workers' queues say so, and the layout), and
 * the output stays exact.
 */
import { CheckpointStore } from '@weir/checkpoint';
import { createBlobStore } from '@weir/blob';
import { exchangeTopic, keyGroupOfKey, runControlTopic } from '@weir/engine';
import { workerCommandsQueue, type RunSubtasks } from '@weir/protocol';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { KEYS } from '../chaos/support';
import { deleteTopics, waitForDeployment, waitForStatus } from '../control-plane/deployments/support';
import { adminHeaders, eventually } from '../control-plane/support/control-plane';
import { platformFixture } from '../support/platform';
import { totalsFlow } from './totals-flow';

const MAX_PARALLELISM = 32;
const STEP = 2_000;

interface Move {
  moveId: string;
  state: string;
  moves: { keyGroup: number; fromSubtask: number; toSubtask: number }[];
  report: { moved: { keyGroup: number; fromSubtask: number; toSubtask: number; bytes: number; pauseMs: number }[]; durationMs: number } | null;
  failure: string | null;
}

describe('a live key-group move of a deployment over two processes', { timeout: 300_000 }, () => {
  let deploymentId = '';
  const platform = platformFixture({
    name: 'kgmove',
    heartbeatMs: 1_000,
    workers: 0,
    workerSlots: 1,
    topics: { input: 'in', output: 'out' },
    partitions: 2,
    // The job's exchange and control topics are its own: gone with the test, once its job hosts are.
    afterStop: async () => {
      if (deploymentId) await deleteTopics(platform.kafka, [exchangeTopic(platform.tenant.tenantId, deploymentId, 'totals'), runControlTopic(platform.tenant.tenantId, deploymentId)]);
    },
  });
  const flow = totalsFlow(platform, STEP);

  it('moves key groups while records flow, records the move, keeps it across a recovery, and stays exact', async () => {
    const { client } = platform;
    const alive = async (role: string) => {
      const res = await fetch(`${platform.cp.url}/v1/workers/${platform.workerId(role)}`, { headers: adminHeaders() });
      return res.status === 200 && ((await res.json()) as { status: string }).status === 'ALIVE' ? true : undefined;
    };
    // One slot each, ids a < b: process 0 on a, process 1 on b.
    await platform.startWorker('a', 1);
    const doomed = platform.spawnWorker('b');
    await eventually('worker b registered', () => alive('b'));
    const id = (deploymentId = await flow.deploy(await flow.bundle(), `kgmove-${platform.run}`));
    await waitForStatus(client, id, 'RUNNING', 90_000);
    const totalsLayout = async () => {
      const layout = (await client.get(`/v1/deployments/${id}`)).body.layout as { runNo: number; processes: { workerId: string; subtasks: { operatorId: string; keyGroups: number[][] }[] }[] };
      return layout.processes.map((p) => [p.workerId, p.subtasks.find((s) => s.operatorId === 'totals')?.keyGroups]);
    };
    expect(await totalsLayout()).toEqual([
      [platform.workerId('a'), [[0, 15]]],
      [platform.workerId('b'), [[16, 31]]],
    ]);

    // Key groups that hold keys (so each has state to hand over): three of subtask 0's to 1, one of 1's back to 0.
    const used = [...new Set(Array.from({ length: KEYS }, (_, k) => keyGroupOfKey(`k${k}`, MAX_PARALLELISM)))].sort((x, y) => x - y);
    const toOne = used.filter((kg) => kg < 16).slice(0, 3);
    const toZero = used.filter((kg) => kg >= 16).slice(0, 1);
    expect(toOne).toHaveLength(3);
    expect(toZero).toHaveLength(1);
    const owners = Array.from({ length: MAX_PARALLELISM }, (_, kg) => (toOne.includes(kg) ? 1 : toZero.includes(kg) ? 0 : kg < 16 ? 0 : 1));

    await flow.send();
    const flowing = flow.send(3 * STEP);
    const requested = await client.post(`/v1/deployments/${id}/key-group-moves`, {
      operatorId: 'totals',
      moves: [...toOne.map((keyGroup) => ({ keyGroup, toSubtask: 1 })), ...toZero.map((keyGroup) => ({ keyGroup, toSubtask: 0 }))],
      reason: 'end-to-end test',
    });
    expect(requested.status, JSON.stringify(requested.body)).toBe(202);
    const move = requested.body as Move;
    expect(move.moves).toEqual([...toOne.map((keyGroup) => ({ keyGroup, fromSubtask: 0, toSubtask: 1 })), ...toZero.map((keyGroup) => ({ keyGroup, fromSubtask: 1, toSubtask: 0 }))]);
    const done = await eventually(
      'the move DONE',
      async () => {
        const m = (await client.get(`/v1/deployments/${id}/key-group-moves/${move.moveId}`)).body as Move;
        if (m.state === 'FAILED') throw new Error(`the move FAILED: ${m.failure}`);
        return m.state === 'DONE' ? m : undefined;
      },
      { timeoutMs: 90_000, everyMs: 200 },
    ).catch(async (err: Error) => {
      const m = (await client.get(`/v1/deployments/${id}/key-group-moves/${move.moveId}`)).body as Move;
      throw new Error(`${err.message}; last ${JSON.stringify(m)}`);
    });
    await flowing;
    expect(done.report!.moved.map((m) => m.keyGroup).sort((x, y) => x - y)).toEqual([...toOne, ...toZero].sort((x, y) => x - y));
    expect(done.report!.moved.every((m) => m.bytes > 0 && m.pauseMs >= 0)).toBe(true);
    expect(done.report!.durationMs).toBeGreaterThan(0);

    // The layout over REST shows the key groups where they are now.
    const ranges = (subtask: number) => rangesOf(owners, subtask);
    expect(await totalsLayout()).toEqual([
      [platform.workerId('a'), ranges(0)],
      [platform.workerId('b'), ranges(1)],
    ]);
    await flow.expectExactOutput(60_000);

    // A checkpoint cut after the move, so the recovery restores state laid out by the new routing.
    const blob = createBlobStore(platform.config);
    try {
      const store = new CheckpointStore(blob);
      const scope = { tenantId: platform.tenant.tenantId, jobId: id };
      const before = (await store.latest(scope))?.manifest.checkpointId ?? 0;
      await eventually('a checkpoint after the move', async () => ((await store.latest(scope))!.manifest.checkpointId > before ? true : undefined), { timeoutMs: 60_000, everyMs: 200 });
    } finally {
      blob.close();
    }

    // Worker b dies: run 2 goes to a and c, the only free slots, with the routing the move left.
    await platform.startWorker('c', 1);
    doomed.kill('SIGKILL');
    await waitForDeployment(client, id, 'run 2 running', (d) => d.status === 'RUNNING' && d.runNo === 2, 120_000);
    expect(await totalsLayout()).toEqual([
      [platform.workerId('a'), ranges(0)],
      [platform.workerId('c'), ranges(1)],
    ]);
    const sent = await runCommands(platform.config, [
      [platform.workerId('a'), `${id}-run-2`],
      [platform.workerId('c'), `${id}-run-2-p1`],
    ]);
    for (const c of sent) expect(c.routing?.totals).toEqual(owners);

    await flow.send();
    await flow.expectExactOutput(60_000);
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
    await waitForStatus(client, id, 'CANCELLED', 60_000);
  });
});

/** The run-subtasks commands as the workers' queues hold them (completed jobs are kept a day). */
async function runCommands(config: { WEIR_REDIS_URL: string; WEIR_QUEUE_PREFIX: string }, keys: [workerId: string, key: string][]): Promise<RunSubtasks[]> {
  const redis = new Redis(config.WEIR_REDIS_URL, { maxRetriesPerRequest: null });
  try {
    const out: RunSubtasks[] = [];
    for (const [workerId, key] of keys) {
      const queue = new Queue(workerCommandsQueue(workerId), { connection: redis, prefix: config.WEIR_QUEUE_PREFIX });
      const job = await queue.getJob(key);
      expect(job, `${key} on ${workerId}'s queue`).toBeDefined();
      out.push(job!.data as RunSubtasks);
      await queue.close();
    }
    return out;
  } finally {
    redis.disconnect();
  }
}

function rangesOf(owners: number[], subtask: number): number[][] {
  const out: number[][] = [];
  owners.forEach((o, kg) => {
    if (o !== subtask) return;
    const last = out[out.length - 1];
    if (last && last[1] === kg - 1) last[1] = kg;
    else out.push([kg, kg]);
  });
  return out;
}

import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerLivenessSweeper } from '../../apps/control-plane/src/workers/worker-liveness.sweeper';
import { spawnWorker } from './deployments/support';
import {
  adminHeaders,
  capturingLog,
  deleteQueues,
  deleteWorkers,
  eventually,
  readJson,
  startControlPlane,
  testConfig,
  uniquePrefix,
  type RunningControlPlane,
  type WorkerBody,
} from './support/control-plane';

const HEARTBEAT_MS = 200;
/** Longer than the LOST timeout (the 3 s floor): without the stall accounting the worker would be LOST. */
const STALL_MS = 4_000;

/**
 * The control plane's own stall is not a worker's silence: a live worker (its own process, heartbeating every
 * 200 ms) stays ALIVE through a 4 s stall of the control plane's event loop, after which its heartbeats are
 * applied late. Fails without the ObservationClock (the first sweep after the stall declares it LOST).
 */
describe('a stalled control plane', () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: String(HEARTBEAT_MS), WEIR_LOG_LEVEL: 'info' });
  const log = capturingLog();
  const workerId = `stall-${randomBytes(3).toString('hex')}`;
  let cp: RunningControlPlane;
  let home: string;
  let worker: ChildProcess | undefined;

  const getWorker = async () => {
    const res = await fetch(`${cp.url}/v1/workers/${workerId}`, { headers: adminHeaders() });
    return res.status === 200 ? await readJson<WorkerBody>(res) : undefined;
  };

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'weir-stall-'));
    cp = await startControlPlane(config, { logDestination: log.destination, workerSweepIntervalMs: HEARTBEAT_MS });
    worker = spawnWorker(config, workerId, home, 1);
  });
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await cp?.close();
    await deleteQueues(config);
    await deleteWorkers(config, [workerId]);
    await rm(home, { recursive: true, force: true });
  });

  it('does not declare a live worker LOST for the silence it caused itself', { timeout: 90_000 }, async () => {
    const alive = await eventually('the worker to be ALIVE', async () => ((await getWorker())?.status === 'ALIVE' ? getWorker() : undefined), {
      timeoutMs: 60_000,
    });
    // Busy-wait: the control plane (in this process) neither reads heartbeats nor fires timers meanwhile.
    const until = Date.now() + STALL_MS;
    while (Date.now() < until) Math.sqrt(Math.random());
    // The first thing after the stall is a sweep (as its overdue timer would be), before the heartbeats queued
    // meanwhile can be applied: it reads the worker as silent for the whole stall.
    const sweep = cp.app.get(WorkerLivenessSweeper).sweep();

    const seen = Date.parse((await getWorker())!.lastSeenAt);
    const after = await eventually('heartbeats applied again', async () => {
      const w = await getWorker();
      return w && Date.parse(w.lastSeenAt) > seen ? w : undefined;
    });
    await sweep;
    expect(after.status).toBe('ALIVE');
    // Never LOST in between: a LOST and back would have moved statusChangedAt.
    expect(after.statusChangedAt).toBe(alive!.statusChangedAt);
    const lines = log.lines();
    expect(lines.filter((l) => (l.msg as string).startsWith('workers declared LOST:'))).toEqual([]);
    // The sweep did see the silence, and spared it.
    expect(lines.some((l) => (l.msg as string).startsWith('silent workers not declared LOST yet'))).toBe(true);
  });
});

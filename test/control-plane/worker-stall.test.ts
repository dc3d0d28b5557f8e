import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WORKER_EVENTS_QUEUE, type WorkerEvent } from '@weir/protocol';
import { Queue } from 'bullmq';
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
 * What the control plane has not applied yet is not a worker's silence (PendingWorkerEvents): a live worker (its own
 * process, heartbeating every 200 ms) stays ALIVE through a 4 s stall of the control plane's event loop, its
 * heartbeats waiting in the queue meanwhile; and a worker whose heartbeat is delayed in the queue for longer than the
 * timeout (as a retried one is) stays ALIVE. Both fail without the pending check: LOST at the first sweep after 3 s.
 */
describe('worker silence the control plane has not heard', () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: String(HEARTBEAT_MS), WEIR_LOG_LEVEL: 'info' });
  const log = capturingLog();
  const workerId = `stall-${randomBytes(3).toString('hex')}`;
  let cp: RunningControlPlane;
  let home: string;
  const queuedId = `queued-${randomBytes(3).toString('hex')}`;
  let worker: ChildProcess | undefined;
  let events: Queue;

  const getWorker = async (id = workerId) => {
    const res = await fetch(`${cp.url}/v1/workers/${id}`, { headers: adminHeaders() });
    return res.status === 200 ? await readJson<WorkerBody>(res) : undefined;
  };

  /** Whether a sweep logged `id` as silent but spared. */
  const spared = (id: string) =>
    log
      .lines()
      .filter((l) => (l.msg as string).startsWith('silent workers not declared LOST yet'))
      .some((l) => (l.workers as { id: string }[]).some((w) => w.id === id));

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'weir-stall-'));
    cp = await startControlPlane(config, { logDestination: log.destination, workerSweepIntervalMs: HEARTBEAT_MS });
    worker = spawnWorker(config, workerId, home, 1);
    events = new Queue(WORKER_EVENTS_QUEUE, { connection: { url: config.WEIR_REDIS_URL }, prefix: config.WEIR_QUEUE_PREFIX });
  });
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await events?.close();
    await cp?.close();
    await deleteQueues(config);
    await deleteWorkers(config, [workerId, queuedId]);
    await rm(home, { recursive: true, force: true });
  });

  it('does not declare a live worker LOST for the silence it caused itself', { timeout: 90_000 }, async () => {
    const alive = await eventually('the worker to be ALIVE', async () => ((await getWorker())?.status === 'ALIVE' ? getWorker() : undefined), {
      timeoutMs: 60_000,
    });
    const sweeper = cp.app.get(WorkerLivenessSweeper);
    // No sweep in flight when the stall begins: one would answer the sweep below with what it read before the stall.
    await sweeper.sweep();
    // Busy-wait: the control plane (in this process) neither reads heartbeats nor fires timers meanwhile.
    const until = Date.now() + STALL_MS;
    while (Date.now() < until) Math.sqrt(Math.random());
    // The first thing after the stall is a sweep (as its overdue timer would be), before the heartbeats queued
    // meanwhile can be applied: it reads the worker as silent for the whole stall.
    const sweep = sweeper.sweep();

    const seen = Date.parse((await getWorker())!.lastSeenAt);
    const after = await eventually('heartbeats applied again', async () => {
      const w = await getWorker();
      return w && Date.parse(w.lastSeenAt) > seen ? w : undefined;
    });
    await sweep;
    expect(after.status).toBe('ALIVE');
    // Never LOST in between: a LOST and back would have moved statusChangedAt.
    expect(after.statusChangedAt).toBe(alive!.statusChangedAt);
    expect(log.lines().filter((l) => (l.msg as string).startsWith('workers declared LOST:'))).toEqual([]);
    // Whether that sweep spared it as pending or found its heartbeats applied by the time it marked is a race;
    // either way it is not LOST (without the pending check it is).
  });

  it('does not declare a worker LOST while one of its events is still in the queue', { timeout: 60_000 }, async () => {
    const descriptor = { workerId: queuedId, host: 'elsewhere', pid: 1, slots: 1, version: '0', startedAt: Date.now(), heartbeatMs: HEARTBEAT_MS };
    const started: WorkerEvent = { v: 1, type: 'worker.started', worker: descriptor, seq: 0, sentAt: Date.now(), runningSubtasks: [] };
    await events.add(started.type, started);
    const alive = await eventually('the worker to be ALIVE', async () => ((await getWorker(queuedId))?.status === 'ALIVE' ? getWorker(queuedId) : undefined));
    // Its next heartbeat waits in the queue (as one retried after a failed apply would) for longer than the timeout.
    const beat: WorkerEvent = { v: 1, type: 'worker.heartbeat', worker: descriptor, seq: 1, sentAt: Date.now(), runningSubtasks: [] };
    await events.add(beat.type, beat, { delay: STALL_MS });
    const after = await eventually('the queued heartbeat applied', async () => {
      const w = await getWorker(queuedId);
      return w && w.lastSeenAt !== alive!.lastSeenAt ? w : undefined;
    });
    expect(after.status).toBe('ALIVE');
    expect(after.statusChangedAt).toBe(alive!.statusChangedAt);
    expect(spared(queuedId)).toBe(true);
  });
});

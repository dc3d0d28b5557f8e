import { randomBytes } from 'node:crypto';
import { createWorkerReporter, WORKER_EVENTS_QUEUE, type WorkerEvent } from '@weir/protocol';
import { Queue } from 'bullmq';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminHeaders,
  deleteQueues,
  deleteWorkers,
  eventually,
  readJson,
  startControlPlane,
  testConfig,
  uniquePrefix,
  type PageBody,
  type ProblemBody,
  type RunningControlPlane,
  type WorkerBody,
} from './support/control-plane';

const HEARTBEAT_MS = 200;
const run = randomBytes(3).toString('hex');
const workerIds: string[] = [];
const newWorkerId = (name: string) => {
  const id = `test-${run}-${name}`;
  workerIds.push(id);
  return id;
};

describe('worker registry', () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: String(HEARTBEAT_MS) });
  let cp: RunningControlPlane;
  /** Sends raw protocol events, as a worker that dies without a word would have left them. */
  let events: Queue;

  const getWorker = async (id: string) => {
    const res = await fetch(`${cp.url}/v1/workers/${id}`, { headers: adminHeaders() });
    return res.status === 200 ? await readJson<WorkerBody>(res) : undefined;
  };
  const statusOf = (id: string, status: string) => async () => {
    const worker = await getWorker(id);
    return worker?.status === status ? worker : undefined;
  };

  beforeAll(async () => {
    cp = await startControlPlane(config, { workerSweepIntervalMs: HEARTBEAT_MS });
    events = new Queue(WORKER_EVENTS_QUEUE, { connection: { url: config.WEIR_REDIS_URL }, prefix: config.WEIR_QUEUE_PREFIX });
  });
  afterAll(async () => {
    await events?.close();
    await cp?.close();
    await deleteQueues(config);
    await deleteWorkers(config, workerIds);
  });

  it('lists a reporting worker as ALIVE with what it runs, then STOPPED after stop()', async () => {
    const id = newWorkerId('reporter');
    const running = [{ tenantId: 't1', jobId: 'fraud', operatorId: 'score', subtask: 0, state: 'RUNNING' as const }];
    const reporter = createWorkerReporter(
      config,
      { workerId: id, slots: 3, version: '0.1.0-test' },
      { status: () => ({ runningSubtasks: running }), logger: pino({ level: 'silent' }) },
    );
    await reporter.start();
    try {
      const alive = await eventually('the worker to be ALIVE', statusOf(id, 'ALIVE'));
      expect(alive).toMatchObject({ id, slots: 3, version: '0.1.0-test', pid: process.pid, heartbeatMs: HEARTBEAT_MS });
      // A subtask reported without a process index runs in process 0 of its run (a run in one process).
      expect(alive.runningSubtasks).toEqual(running.map((s) => ({ ...s, process: 0 })));

      const listed = await eventually('the worker in the list', async () => {
        const res = await fetch(`${cp.url}/v1/workers?limit=200&status=ALIVE`, { headers: adminHeaders() });
        const page = await readJson<PageBody<WorkerBody>>(res);
        return page.items.find((w) => w.id === id);
      });
      expect(listed.status).toBe('ALIVE');

      // Heartbeats keep moving last_seen_at forward.
      const seen = Date.parse(alive.lastSeenAt);
      await eventually('a later heartbeat', async () => {
        const w = await getWorker(id);
        return w && Date.parse(w.lastSeenAt) > seen ? w : undefined;
      });
    } finally {
      await reporter.stop('test over');
    }
    const stopped = await eventually('the worker to be STOPPED', statusOf(id, 'STOPPED'));
    expect(stopped.runningSubtasks).toEqual([]);
  });

  it('declares a worker LOST when its heartbeats stop, and ALIVE again when they resume', async () => {
    const id = newWorkerId('silent');
    const worker = { workerId: id, host: 'gone', pid: 1, slots: 1, version: '0.1.0', startedAt: Date.now(), heartbeatMs: HEARTBEAT_MS };
    const started: WorkerEvent = { v: 1, type: 'worker.started', worker, seq: 0, sentAt: Date.now(), runningSubtasks: [] };
    await events.add(started.type, started);
    await eventually('the worker to be ALIVE', statusOf(id, 'ALIVE'));
    const lost = await eventually('the worker to be LOST', statusOf(id, 'LOST'));
    expect(Date.parse(lost.statusChangedAt)).toBeGreaterThanOrEqual(Date.parse(lost.lastSeenAt));

    const beat: WorkerEvent = { v: 1, type: 'worker.heartbeat', worker, seq: 1, sentAt: Date.now(), runningSubtasks: [] };
    await events.add(beat.type, beat);
    await eventually('the worker to be ALIVE again', statusOf(id, 'ALIVE'));
  });

  it('ignores events older than what it already applied', async () => {
    const id = newWorkerId('reordered');
    const worker = { workerId: id, host: 'h', pid: 2, slots: 2, version: '0.1.0', startedAt: Date.now(), heartbeatMs: 60_000 };
    const stopping: WorkerEvent = { v: 1, type: 'worker.stopping', worker, seq: 5, sentAt: Date.now() };
    await events.add(stopping.type, stopping);
    await eventually('the worker to be STOPPED', statusOf(id, 'STOPPED'));
    // A heartbeat sent before the stop but delivered after it must not bring the worker back.
    const late: WorkerEvent = { v: 1, type: 'worker.heartbeat', worker, seq: 3, sentAt: Date.now(), runningSubtasks: [] };
    const lateJob = await events.add(late.type, late);
    await eventually('the late heartbeat to be handled', async () => ((await lateJob.isCompleted()) ? true : undefined));
    expect((await getWorker(id))?.status).toBe('STOPPED');
    // A new incarnation of the same id does.
    const restarted: WorkerEvent = { ...late, seq: 0, worker: { ...worker, startedAt: worker.startedAt + 1 }, type: 'worker.started' };
    await events.add(restarted.type, restarted);
    await eventually('the restarted worker to be ALIVE', statusOf(id, 'ALIVE'));
  });

  it('pages through the list with limit and cursor, in id order without repeats', async () => {
    const ids = ['page-a', 'page-b', 'page-c'].map(newWorkerId);
    for (const id of ids) {
      const worker = { workerId: id, host: 'h', pid: 3, slots: 1, version: '0.1.0', startedAt: Date.now(), heartbeatMs: 60_000 };
      const started: WorkerEvent = { v: 1, type: 'worker.started', worker, seq: 0, sentAt: Date.now(), runningSubtasks: [] };
      await events.add(started.type, started);
    }
    await eventually('all three workers', async () => ((await Promise.all(ids.map(getWorker))).every(Boolean) ? true : undefined));

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `limit=2&cursor=${encodeURIComponent(cursor)}` : 'limit=2';
      const res = await fetch(`${cp.url}/v1/workers?${query}`, { headers: adminHeaders() });
      expect(res.status).toBe(200);
      const page = await readJson<PageBody<WorkerBody>>(res);
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((w) => w.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual(seen);
    for (const id of ids) expect(seen).toContain(id);
  });

  it('answers an unknown worker id with 404 problem details', async () => {
    const res = await fetch(`${cp.url}/v1/workers/no-such-worker-${run}`, { headers: adminHeaders({ 'X-Request-Id': `req-${run}` }) });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await readJson<ProblemBody>(res)).toMatchObject({
      type: 'urn:weir:problem:not-found',
      status: 404,
      title: 'Not found',
      instance: `/v1/workers/no-such-worker-${run}`,
      requestId: `req-${run}`,
    });
  });

  it.each([['limit=0'], ['limit=abc'], ['limit=1000'], ['limit=1&limit=2']])(
    'answers a bad limit (%s) with 400 problem details naming the parameter',
    async (query) => {
      const res = await fetch(`${cp.url}/v1/workers?${query}`, { headers: adminHeaders() });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = await readJson<ProblemBody>(res);
      expect(problem).toMatchObject({ type: 'urn:weir:problem:invalid-request', status: 400, instance: '/v1/workers' });
      expect(problem.detail).toContain("'limit'");
      expect(problem.errors).toEqual([{ in: 'query', name: 'limit', reason: 'must be an integer from 1 to 200' }]);
    },
  );

  it('answers a forged cursor, an unknown status and an unknown parameter with 400', async () => {
    for (const [query, name] of [['cursor=forged', 'cursor'], ['status=DEAD', 'status'], ['limt=5', 'limt']]) {
      const res = await fetch(`${cp.url}/v1/workers?${query}`, { headers: adminHeaders() });
      expect(res.status, query).toBe(400);
      const problem = await readJson<ProblemBody>(res);
      expect(problem.errors?.map((e) => e.name)).toEqual([name]);
    }
  });
});

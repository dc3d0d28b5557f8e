import { randomBytes } from 'node:crypto';
import { WORKER_EVENTS_QUEUE, type WorkerEvent } from '@weir/protocol';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

// The silent workers are LOST after the 3 s floor (LOST_FLOOR_MS) whatever the interval; no need for a fast one.
const HEARTBEAT_MS = 500;

/** Two control-plane instances on one database and one queue, as in a rolling deployment. */
describe('two control-plane instances', () => {
  const config = testConfig({
    WEIR_QUEUE_PREFIX: uniquePrefix(),
    WEIR_WORKER_HEARTBEAT_MS: String(HEARTBEAT_MS),
    WEIR_LOG_LEVEL: 'info',
  });
  const logs = [capturingLog(), capturingLog()];
  const ids = Array.from({ length: 6 }, (_, i) => `test-${randomBytes(3).toString('hex')}-${i}`);
  let instances: RunningControlPlane[] = [];
  let events: Queue;

  beforeAll(async () => {
    instances = await Promise.all(logs.map((l) => startControlPlane(config, { logDestination: l.destination, workerSweepIntervalMs: 50 })));
    events = new Queue(WORKER_EVENTS_QUEUE, { connection: { url: config.WEIR_REDIS_URL }, prefix: config.WEIR_QUEUE_PREFIX });
  });
  afterAll(async () => {
    await events?.close();
    await Promise.all(instances.map((i) => i.close()));
    await deleteQueues(config);
    await deleteWorkers(config, ids);
  });

  it('share the events, agree on the fleet, and declare each silent worker LOST exactly once', async () => {
    for (const id of ids) {
      const worker = { workerId: id, host: 'h', pid: 1, slots: 1, version: '0', startedAt: Date.now(), heartbeatMs: HEARTBEAT_MS };
      const started: WorkerEvent = { v: 1, type: 'worker.started', worker, seq: 0, sentAt: Date.now(), runningSubtasks: [] };
      await events.add(started.type, started);
    }
    for (const id of ids) {
      for (const instance of instances) {
        await eventually(`${id} LOST on ${instance.url}`, async () => {
          const res = await fetch(`${instance.url}/v1/workers/${id}`, { headers: adminHeaders() });
          if (res.status !== 200) return undefined;
          const worker = await readJson<WorkerBody>(res);
          return worker.status === 'LOST' ? worker : undefined;
        });
      }
    }
    const declarations = logs
      .flatMap((l) => l.lines())
      .filter((l) => (l.msg as string).startsWith('workers declared LOST:'))
      .flatMap((l) => l.workerIds as string[])
      .filter((id) => ids.includes(id));
    expect(declarations.sort()).toEqual([...ids].sort());

    // Each started event was applied by exactly one of the two consumers.
    const applied = logs
      .flatMap((l) => l.lines())
      .filter((l) => l.msg === 'worker registered event' && ids.includes(l.workerId as string));
    expect(applied).toHaveLength(ids.length);
  });
});

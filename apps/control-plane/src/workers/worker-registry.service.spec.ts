import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { WorkerEvent } from '@weir/protocol';
import { NotFoundProblem } from '../problems/problem.exception';
import { STALE_HEARTBEAT_MS, WorkerRegistry } from './worker-registry.service';
import type { WorkersRepository } from './workers.repository';

const worker = { workerId: 'w-1', host: 'h', pid: 1, slots: 1, version: '0', startedAt: 0, heartbeatMs: 1000 };

function registry(found: unknown = null) {
  const applied: WorkerEvent[] = [];
  const marked: string[] = [];
  const repository = {
    applyEvent: async (event: WorkerEvent) => {
      applied.push(event);
      return null;
    },
    find: async () => found,
    list: async (limit: number) => Array.from({ length: limit }, (_, i) => ({ id: `w-${i}` })),
    silentWorkers: async () => [
      { id: 'w-stalled', heartbeatMs: 200, silentMs: 3_100 },
      { id: 'w-dead', heartbeatMs: 200, silentMs: 9_000 },
    ],
    markLost: async (ids: string[]) => {
      marked.push(...ids);
      return ids;
    },
  } as unknown as WorkersRepository;
  return { applied, marked, registry: new WorkerRegistry(repository, pino({ level: 'silent' })) };
}

describe('WorkerRegistry', () => {
  it('drops heartbeats from a backlog but never started or stopping events', async () => {
    const { applied, registry: r } = registry();
    const now = 10 * STALE_HEARTBEAT_MS;
    const old = now - STALE_HEARTBEAT_MS - 1;
    await r.apply({ v: 1, type: 'worker.heartbeat', worker, seq: 1, sentAt: old, runningSubtasks: [] }, now);
    await r.apply({ v: 1, type: 'worker.heartbeat', worker, seq: 2, sentAt: now - 10, runningSubtasks: [] }, now);
    await r.apply({ v: 1, type: 'worker.started', worker, seq: 0, sentAt: old, runningSubtasks: [] }, now);
    await r.apply({ v: 1, type: 'worker.stopping', worker, seq: 3, sentAt: old }, now);
    expect(applied.map((e) => e.seq)).toEqual([2, 0, 3]);
  });

  it('marks LOST only the silent workers the judge confirms', async () => {
    const { marked, registry: r } = registry();
    expect(await r.markLost(async (silent) => silent.filter((w) => w.silentMs > 5_000))).toEqual(['w-dead']);
    expect(marked).toEqual(['w-dead']);
  });

  it('throws a not-found problem for an unknown id', async () => {
    await expect(registry(null).registry.get('nope')).rejects.toBeInstanceOf(NotFoundProblem);
  });

  it('asks for one row more than the page, to know whether another page follows', async () => {
    const page = await registry().registry.list(2, undefined, undefined);
    expect(page.items).toHaveLength(2);
    expect(page.nextCursor).not.toBeNull();
  });
});

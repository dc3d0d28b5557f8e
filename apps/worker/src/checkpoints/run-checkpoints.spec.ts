import { CheckpointStore } from '@weir/checkpoint';
import type { CheckpointSnapshot, RunningJob } from '@weir/engine';
import { describe, expect, it } from 'vitest';
import { MemoryBlobStore } from '../../../../libs/checkpoint/src/storage/memory-blob-store.fixture';
import { LocalRunControl } from '../runs/run-control';
import { CheckpointLeader } from './checkpoint-leader';
import { CheckpointParticipant } from './checkpoint-participant';

const scope = { tenantId: 't1', jobId: 'j1' };

/** A job whose cut is a source position; `hang` holds the cut of the checkpoints it names forever. */
function fakeJob(hang: Set<number>) {
  const committed: number[] = [];
  const job = {
    triggerCheckpoint: (checkpointId: number) =>
      hang.has(checkpointId)
        ? new Promise<CheckpointSnapshot>(() => undefined)
        : Promise.resolve({ checkpointId, subtasks: [{ stageId: 'in', subtask: 0, sourcePositions: { 'tx:0': String(checkpointId) } }] }),
    completeCheckpoint: async (checkpointId: number) => void committed.push(checkpointId),
    routingTable: () => ({ keyGroupsOf: () => [] }),
  } as unknown as RunningJob;
  return { job, committed };
}

/** A blob store whose puts of matching keys wait until released. */
class SlowBlobStore extends MemoryBlobStore {
  slow?: RegExp;
  private waiting: (() => void)[] = [];
  override async put(key: string, body: Parameters<MemoryBlobStore['put']>[1]) {
    if (this.slow?.test(key)) await new Promise<void>((resolve) => this.waiting.push(resolve));
    return super.put(key, body);
  }
  release(): void {
    this.waiting.splice(0).forEach((resolve) => resolve());
  }
}

/** A run in one process: the leader and this process's participant over the in-memory channel. */
function checkpointer(job: RunningJob, blob: MemoryBlobStore, fullRequests: { count: number }) {
  const events = { completed: [] as number[], failed: [] as { id: number; error: Error }[] };
  const store = new CheckpointStore(blob);
  const channel = new LocalRunControl();
  const participant = new CheckpointParticipant(job, store, scope, channel, { process: 0, maxParallelism: 8, requestFullCheckpoint: () => fullRequests.count++ }, {
    completed: (done) => events.completed.push(done.checkpointId),
    failed: (id, message) => events.failed.push({ id, error: new Error(message) }),
    stopRequested: () => undefined,
  });
  const leader = new CheckpointLeader(store, scope, channel, 1, { processes: 1, maxParallelism: 8, intervalMs: 5, retain: 3, timeoutMs: 150 }, { retentionFailed: () => undefined }, null);
  void channel.start((delivery) => {
    leader.onDelivery(delivery);
    participant.onMessage(delivery.message);
  });
  const c = {
    start: () => leader.start(),
    stop: async () => {
      await leader.stop();
      await participant.drain();
    },
  };
  return { c, events, leader };
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 20));
};

describe('checkpoint timeout', () => {
  it('gives up a checkpoint whose cut does not complete, reports it, asks for full images, and the next proceeds', async () => {
    const { job, committed } = fakeJob(new Set([1]));
    const fullRequests = { count: 0 };
    const { c, events } = checkpointer(job, new MemoryBlobStore(), fullRequests);
    c.start();
    await until(() => events.completed.length >= 2);
    await c.stop();
    expect(events.failed[0].id).toBe(1);
    expect(events.failed[0].error.message).toMatch(/checkpoint 1 did not complete within 150 ms/);
    expect(fullRequests.count).toBe(1); // the changes handed over at the lost cut cannot be chained onto
    expect(events.completed.slice(0, 2)).toEqual([2, 3]);
    expect(committed).not.toContain(1);
  });

  it('never lets a given-up checkpoint appear later: its manifest is not written when its upload finally ends', async () => {
    const { job, committed } = fakeJob(new Set());
    const blob = new SlowBlobStore();
    blob.slow = /shared\//;
    const fullRequests = { count: 0 };
    const { c, events } = checkpointer(job, blob, fullRequests);
    c.start();
    await until(() => events.failed.length >= 1);
    expect(events.failed[0].error.message).toMatch(/did not complete within 150 ms/);
    blob.slow = undefined;
    blob.release();
    await until(() => events.completed.length >= 1);
    await c.stop();
    expect(fullRequests.count).toBe(0); // the cut reached the chains: their pending links go with the next one
    const store = new CheckpointStore(blob);
    const ids = (await store.list(scope)).flatMap((r) => (r.kind === 'checkpoint' ? [r.checkpointId] : []));
    expect(ids).not.toContain(1);
    expect(committed).not.toContain(1);
    expect(events.completed[0]).toBeGreaterThan(1);
  });
});

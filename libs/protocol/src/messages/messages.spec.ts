import { SubtaskMetrics } from '@weir/metrics';
import { describe, expect, it } from 'vitest';
import { ProtocolValidationError } from '../errors';
import { workerCommandsQueue } from '../names';
import { parseMessage } from '../validate';
import { workerCommandSchema, type WorkerCommand } from './commands';
import { workerEventSchema, type WorkerEvent } from './worker-events';

const worker = { workerId: 'w-1', host: 'h', pid: 42, slots: 4, version: '0.1.0', startedAt: 1_700_000_000_000, heartbeatMs: 2000 };
const running = { tenantId: 't1', jobId: 'j1', operatorId: 'count', subtask: 3, state: 'RUNNING' as const };
const snapshot = {
  tenantId: 't1',
  jobId: 'j1',
  operatorId: 'count',
  subtask: 3,
  fromMs: 1000,
  toMs: 2000,
  recordsIn: 10,
  recordsOut: 9,
  recordsInPerSec: 10,
  recordsOutPerSec: 9,
  busyMsPerSec: 500,
  backpressuredMsPerSec: 0,
  idleMsPerSec: 500,
  eventTimeLatency: 'SElTVA==',
  processingLatency: 'SElTVA==',
  keyGroupCounts: { '7': 10 },
  heavyKeys: [{ key: 'card-1', keyGroup: 7, count: 5, error: 0 }],
  watermarkLagMs: null,
  deadLettered: 0,
  sourceBacklog: 120,
};

describe('worker events', () => {
  it('accepts the three event types', () => {
    const events: WorkerEvent[] = [
      { v: 1, type: 'worker.started', worker, seq: 0, sentAt: 1, runningSubtasks: [] },
      { v: 1, type: 'worker.heartbeat', worker, seq: 1, sentAt: 2, runningSubtasks: [running], metrics: [snapshot] },
      { v: 1, type: 'worker.stopping', worker, seq: 2, sentAt: 3, reason: 'SIGTERM' },
    ];
    for (const event of events) expect(workerEventSchema.parse(event)).toEqual(event);
  });

  it('rejects unknown versions, types and fields', () => {
    const base = { v: 1, type: 'worker.started', worker, seq: 0, sentAt: 1, runningSubtasks: [] };
    expect(workerEventSchema.safeParse({ ...base, v: 2 }).success).toBe(false);
    expect(workerEventSchema.safeParse({ ...base, type: 'worker.exploded' }).success).toBe(false);
    expect(workerEventSchema.safeParse({ ...base, extra: true }).success).toBe(false);
    expect(workerEventSchema.safeParse({ ...base, worker: { ...worker, workerId: 'a:b' } }).success).toBe(false);
    expect(workerEventSchema.safeParse({ ...base, worker: { ...worker, slots: 0 } }).success).toBe(false);
  });

  it('rejects a metrics snapshot that does not match the metrics contract', () => {
    const event = { v: 1, type: 'worker.heartbeat', worker, seq: 1, sentAt: 2, runningSubtasks: [] };
    expect(workerEventSchema.safeParse({ ...event, metrics: [{ ...snapshot, recordsIn: -1 }] }).success).toBe(false);
    expect(workerEventSchema.safeParse({ ...event, metrics: [{ ...snapshot, keyGroupCounts: { x: 1 } }] }).success).toBe(false);
    expect(workerEventSchema.safeParse({ ...event, metrics: [{ ...snapshot, sourceBacklog: -1 }] }).success).toBe(false);
  });

  it('reads a snapshot from a worker that sends no source backlog as reporting none', () => {
    const { sourceBacklog: _, ...older } = snapshot;
    const parsed = workerEventSchema.parse({ v: 1, type: 'worker.heartbeat', worker, seq: 1, sentAt: 2, runningSubtasks: [], metrics: [older] });
    expect(parsed.type === 'worker.heartbeat' && parsed.metrics?.[0].sourceBacklog).toBeNull();
  });
});

describe('worker commands', () => {
  const run: WorkerCommand = {
    v: 1,
    type: 'run-subtasks',
    idempotencyKey: 'deploy-1.run-1',
    issuedAt: 1,
    tenantId: 't1',
    jobId: 'j1',
    bundle: { key: 'tenants/t1/bundles/fraud/1.0.0.tgz', sha256: 'a'.repeat(64) },
    maxParallelism: 128,
    subtasks: [{ operatorId: 'count', subtask: 0, keyGroups: [[0, 63]] }],
  };

  it('accepts run-subtasks and stop-subtasks', () => {
    const stop: WorkerCommand = {
      v: 1,
      type: 'stop-subtasks',
      idempotencyKey: 'deploy-1.stop-1',
      issuedAt: 2,
      tenantId: 't1',
      jobId: 'j1',
      subtasks: [{ operatorId: 'count', subtask: 0 }],
      savepoint: { snapshotId: 'sp-1', location: 's3://weir/sp-1' },
      reason: 'upgrade',
    };
    expect(workerCommandSchema.parse(run)).toEqual(run);
    expect(workerCommandSchema.parse(stop)).toEqual(stop);
  });

  it('checks key groups against maxParallelism and range order', () => {
    const outOfRange = { ...run, subtasks: [{ operatorId: 'count', subtask: 0, keyGroups: [[0, 128]] }] };
    const reversed = { ...run, subtasks: [{ operatorId: 'count', subtask: 0, keyGroups: [[9, 3]] }] };
    expect(() => parseMessage(workerCommandSchema, outOfRange, 'command')).toThrow(/subtasks\.0\.keyGroups\.0/);
    expect(workerCommandSchema.safeParse(reversed).success).toBe(false);
  });

  it('rejects idempotency keys BullMQ cannot use as job ids', () => {
    expect(workerCommandSchema.safeParse({ ...run, idempotencyKey: 'a:b' }).success).toBe(false);
    expect(workerCommandSchema.safeParse({ ...run, idempotencyKey: '' }).success).toBe(false);
  });

  it('reports every problem with its path', () => {
    try {
      parseMessage(workerCommandSchema, { ...run, tenantId: '', subtasks: [] }, 'command');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ProtocolValidationError);
      expect((err as ProtocolValidationError).issues.map((i) => i.path).sort()).toEqual(['subtasks', 'tenantId']);
    }
  });
});

describe('queue names', () => {
  it('gives each worker its own command queue and refuses ids Redis keys cannot carry', () => {
    expect(workerCommandsQueue('w-1')).toBe('worker-commands.w-1');
    expect(() => workerCommandsQueue('w:1')).toThrow(RangeError);
  });
});

describe('metrics snapshots from libs/metrics', () => {
  it('travel in a heartbeat unchanged', () => {
    const metrics = new SubtaskMetrics({
      identity: { tenantId: 't1', jobId: 'j1', operatorId: 'count', subtask: 0 },
      maxParallelism: 128,
      nowMs: 1_000,
    });
    metrics.onBatchIn(3);
    metrics.onBatchOut(2);
    metrics.recordLatency(1_000, 1_100, 1_500);
    metrics.offerKey('card-1', 7, 3);
    const snapshot = JSON.parse(JSON.stringify(metrics.snapshot(2_000, 1_900)));
    metrics.close();
    const event = { v: 1, type: 'worker.heartbeat', worker, seq: 1, sentAt: 2_000, runningSubtasks: [], metrics: [snapshot] };
    expect(workerEventSchema.parse(event)).toEqual(event);
  });
});

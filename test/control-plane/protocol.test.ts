import { randomBytes } from 'node:crypto';
import {
  CommandRejectedError,
  createCommandConsumer,
  createCommandDispatcher,
  createWorkerEventConsumer,
  createWorkerReporter,
  ProtocolValidationError,
  workerCommandsQueue,
  type RunSubtasks,
  type StopSubtasks,
  type WorkerEvent,
} from '@weir/protocol';
import { Queue } from 'bullmq';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { closedPort, deleteQueues, eventually, testConfig, uniquePrefix } from './support/control-plane';

const silent = pino({ level: 'silent' });
const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });

const runCommand = (key: string, tenantId = 't1'): RunSubtasks => ({
  v: 1,
  type: 'run-subtasks',
  idempotencyKey: key,
  issuedAt: Date.now(),
  tenantId,
  jobId: 'fraud',
  bundle: { key: 'tenants/t1/bundles/fraud/1.tgz', sha256: 'b'.repeat(64) },
  maxParallelism: 128,
  subtasks: [{ operatorId: 'score', subtask: 0, keyGroups: [[0, 127]] }],
});

describe('control plane → worker commands', () => {
  afterAll(() => deleteQueues(config));

  it('delivers commands in order, once per idempotency key, and fails rejected ones without retrying', async () => {
    const workerId = `test-${randomBytes(3).toString('hex')}`;
    const applied: string[] = [];
    let rejectedAttempts = 0;
    const consumer = createCommandConsumer(
      config,
      workerId,
      {
        async 'run-subtasks'(command) {
          if (command.tenantId === 'nope') {
            rejectedAttempts++;
            throw new CommandRejectedError('bundle not found');
          }
          applied.push(command.idempotencyKey);
        },
        async 'stop-subtasks'(command: StopSubtasks) {
          applied.push(command.idempotencyKey);
        },
      },
      { logger: silent },
    );
    const dispatcher = createCommandDispatcher(config, { logger: silent });
    await consumer.start();
    try {
      await dispatcher.send(workerId, runCommand('run-1'));
      await dispatcher.send(workerId, runCommand('run-1'));
      await dispatcher.send(workerId, {
        v: 1,
        type: 'stop-subtasks',
        idempotencyKey: 'stop-1',
        issuedAt: Date.now(),
        tenantId: 't1',
        jobId: 'fraud',
        subtasks: [{ operatorId: 'score', subtask: 0 }],
        reason: 'suspend',
      });
      await dispatcher.send(workerId, runCommand('run-bad', 'nope'));
      await eventually('both commands applied', async () => (applied.length >= 2 ? true : undefined));

      const queue = new Queue(workerCommandsQueue(workerId), { connection: { url: config.WEIR_REDIS_URL }, prefix: config.WEIR_QUEUE_PREFIX });
      try {
        const failed = await eventually('the rejected command to fail', async () => {
          const [job] = await queue.getFailed();
          return job;
        });
        expect(failed.id).toBe('run-bad');
        expect(failed.failedReason).toContain('bundle not found');
      } finally {
        await queue.close();
      }
      expect(applied).toEqual(['run-1', 'stop-1']);
      expect(rejectedAttempts).toBe(1);
      // Sending a key that already ran is still a no-op.
      await dispatcher.send(workerId, runCommand('run-1'));
      expect(await dispatcher.pending(workerId)).toBe(0);
    } finally {
      await dispatcher.close();
      await consumer.close();
    }
  });

  it("runs another job's commands while one job's long command is in hand, and keeps each job's own in order", async () => {
    const workerId = `test-${randomBytes(3).toString('hex')}`;
    const applied: string[] = [];
    let releaseSlow!: () => void;
    const slow = new Promise<void>((resolve) => (releaseSlow = resolve));
    const consumer = createCommandConsumer(
      config,
      workerId,
      {
        async 'run-subtasks'(command) {
          // The first command of tenant t-slow holds until the other tenant's commands are applied.
          if (command.idempotencyKey === 'slow-run') await slow;
          applied.push(command.idempotencyKey);
        },
        async 'stop-subtasks'(command: StopSubtasks) {
          applied.push(command.idempotencyKey);
        },
      },
      { logger: silent },
    );
    const dispatcher = createCommandDispatcher(config, { logger: silent });
    const stop = (key: string, tenantId: string): StopSubtasks => ({
      v: 1,
      type: 'stop-subtasks',
      idempotencyKey: key,
      issuedAt: Date.now(),
      tenantId,
      jobId: 'fraud',
      subtasks: [{ operatorId: 'score', subtask: 0 }],
      reason: 'suspend',
    });
    await consumer.start();
    try {
      await dispatcher.send(workerId, runCommand('slow-run', 't-slow'));
      await dispatcher.send(workerId, stop('slow-stop', 't-slow'));
      await dispatcher.send(workerId, runCommand('other-run', 't-other'));
      await dispatcher.send(workerId, stop('other-stop', 't-other'));
      await eventually("the other tenant's commands applied", async () => (applied.length >= 2 ? true : undefined));
      // The slow job's stop waits behind its run, however long that takes.
      expect(applied).toEqual(['other-run', 'other-stop']);
      releaseSlow();
      await eventually("the slow tenant's commands applied", async () => (applied.length >= 4 ? true : undefined));
      expect(applied).toEqual(['other-run', 'other-stop', 'slow-run', 'slow-stop']);
    } finally {
      releaseSlow();
      await dispatcher.close();
      await consumer.close();
    }
  });

  it('refuses to send an invalid command', async () => {
    const dispatcher = createCommandDispatcher(config, { logger: silent });
    try {
      await expect(dispatcher.send('w-1', { ...runCommand('bad'), maxParallelism: 0 })).rejects.toBeInstanceOf(
        ProtocolValidationError,
      );
    } finally {
      await dispatcher.close();
    }
  });
});

describe('worker reporter', () => {
  afterAll(() => deleteQueues(config));

  it('announces, heartbeats in sequence, keeps reporting subtasks when its status callback fails, and says goodbye', async () => {
    const workerId = `test-${randomBytes(3).toString('hex')}`;
    const received: WorkerEvent[] = [];
    const consumer = createWorkerEventConsumer(
      config,
      async (event) => {
        if (event.worker.workerId === workerId) received.push(event);
      },
      { logger: silent, concurrency: 1 },
    );
    await consumer.start();
    const running = [{ tenantId: 't1', jobId: 'fraud', operatorId: 'score', subtask: 1, state: 'RUNNING' as const }];
    let calls = 0;
    const reporter = createWorkerReporter(
      { ...config, WEIR_WORKER_HEARTBEAT_MS: 100 },
      { workerId, slots: 2, version: '0.1.0' },
      {
        logger: silent,
        status: () => {
          if (++calls > 2) throw new Error('supervisor busy');
          return { runningSubtasks: running };
        },
      },
    );
    try {
      await reporter.start();
      await eventually('four heartbeats', async () => (received.length >= 5 ? true : undefined));
      await reporter.stop('test over');
      await eventually('worker.stopping', async () => (received.some((e) => e.type === 'worker.stopping') ? true : undefined));
    } finally {
      await reporter.stop();
      await consumer.close();
    }
    const ordered = [...received].sort((a, b) => a.seq - b.seq);
    expect(ordered[0].type).toBe('worker.started');
    expect(ordered.at(-1)?.type).toBe('worker.stopping');
    expect(ordered.map((e) => e.seq)).toEqual(ordered.map((_, i) => i));
    for (const event of ordered.slice(0, -1)) {
      expect(event.type === 'worker.stopping' ? [] : event.runningSubtasks, `seq ${event.seq}`).toEqual(running);
    }
  });
});

describe('worker reporter without Redis', () => {
  it('starts and stops without throwing, and says so in its log', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const reporter = createWorkerReporter(
      { ...config, WEIR_REDIS_URL: `redis://127.0.0.1:${await closedPort()}`, WEIR_WORKER_HEARTBEAT_MS: 200 },
      { workerId: 'test-no-redis', slots: 1, version: '0.1.0' },
      { logger },
    );
    await expect(reporter.start()).resolves.toBeUndefined();
    await expect(reporter.stop('done')).resolves.toBeUndefined();
    expect(lines.join('')).toContain('could not send worker event');
  });
});

/**
 * CommandGateway.commandState against the real Redis and BullMQ: what the reconciler reads of a move's or a live
 * rescale's command while the worker finishes it. A read that pairs a job hash from before the command completed with
 * a state from after it would say "completed" without the worker's report, and the reconciler would take a rescale
 * that worked for a malformed answer and fall back to a restart (live-rescale.test.ts flaked so, once in ten runs).
 */
import { randomBytes } from 'node:crypto';
import { CommandRejectedError, createCommandConsumer, type RescaleReport, type RescaleRun } from '@weir/protocol';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { CommandGateway } from '../../apps/control-plane/src/placement/command-gateway';
import { deleteQueues, testConfig, uniquePrefix } from './support/control-plane';

const silent = pino({ level: 'silent' });
const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const rescaleRun = (n: number): Omit<RescaleRun, 'v' | 'type' | 'issuedAt'> => ({
  idempotencyKey: `cs-${n}-rescale-r${n}`,
  tenantId: 't1',
  // A job per command: the consumer runs different jobs' commands at once, so completions overlap the reads.
  jobId: `job-${n}`,
  runNo: 1,
  rescaleId: `r${n}`,
  processes: 2,
  parallelism: { counts: 2 },
  reason: 'command-state test',
});

describe('command state on a worker queue', () => {
  afterAll(() => deleteQueues(config));

  it('reads a command that completes meanwhile as queued or as completed with its result, never completed without it', async () => {
    const workerId = `test-${randomBytes(3).toString('hex')}`;
    const consumer = createCommandConsumer(
      config,
      workerId,
      {
        'run-subtasks': async () => undefined,
        'stop-subtasks': async () => undefined,
        'rescale-run': async (command): Promise<RescaleReport> => {
          if (command.rescaleId === 'r-refused') throw new CommandRejectedError('not live here');
          await sleep(2 + Math.random() * 15);
          return { rescaleId: command.rescaleId, processes: command.processes, parallelism: command.parallelism, routing: { counts: [0, 1] }, moved: [], durationMs: 1 };
        },
      },
      { logger: silent },
    );
    const gateway = new CommandGateway(config);
    await consumer.start();
    try {
      const commands = Array.from({ length: 120 }, (_, n) => rescaleRun(n));
      const answers = new Map<string, unknown>();
      const pollers = commands.map(async (command) => {
        await gateway.sendRescale(workerId, command);
        for (;;) {
          const state = await gateway.commandState(workerId, command.idempotencyKey);
          expect(state.kind).toMatch(/^(queued|completed)$/);
          if (state.kind === 'completed') return answers.set(command.rescaleId, state.result);
          await sleep(Math.random() * 3);
        }
      });
      await Promise.all(pollers);
      for (const command of commands) expect(answers.get(command.rescaleId)).toMatchObject({ rescaleId: command.rescaleId });

      const refused = { ...rescaleRun(999), idempotencyKey: 'cs-refused', rescaleId: 'r-refused' };
      await gateway.sendRescale(workerId, refused);
      let state = await gateway.commandState(workerId, refused.idempotencyKey);
      while (state.kind === 'queued') state = await gateway.commandState(workerId, refused.idempotencyKey);
      expect(state).toEqual({ kind: 'failed', reason: 'not live here' });
      expect(await gateway.commandState(workerId, 'cs-never-sent')).toEqual({ kind: 'missing' });
    } finally {
      await consumer.close();
      await gateway.onModuleDestroy();
    }
  });
});

import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { consumerConnection, withTimeout, type ProtocolConfig } from './connection';
import { CommandRejectedError, ProtocolValidationError } from './errors';
import { defaultLogger, errorFields, type ProtocolLogger } from './logger';
import {
  workerCommandSchema,
  type MoveKeyGroups,
  type SplitKeys,
  type MoveReport,
  type RescaleProgress,
  type RescaleReport,
  type RescaleRun,
  type RunSubtasks,
  type StopSubtasks,
  type TakeSavepoint,
  type WorkerCommand,
} from './messages/commands';
import { workerCommandsQueue } from './names';
import { parseMessage } from './validate';

export interface CommandContext {
  /** 1 on the first delivery; higher when BullMQ retries after a failure or a crash. */
  readonly attempt: number;
  /** Publishes how far a long command is (the BullMQ job's progress, which the control plane reads). */
  progress(progress: RescaleProgress): Promise<void>;
}

/**
 * One handler per command type. Delivery is at least once (a worker that crashes mid-command gets it again), so
 * handlers must be idempotent by `idempotencyKey`. Throw CommandRejectedError for a command that can never
 * succeed; any other error is retried with backoff.
 */
export interface CommandHandlers {
  'run-subtasks'(command: RunSubtasks, context: CommandContext): Promise<void>;
  'stop-subtasks'(command: StopSubtasks, context: CommandContext): Promise<void>;
  /** Optional: a consumer without it refuses savepoint commands for good. */
  'take-savepoint'?(command: TakeSavepoint, context: CommandContext): Promise<void>;
  /** Optional likewise; its report is the command's result (the BullMQ job's return value). */
  'move-key-groups'?(command: MoveKeyGroups, context: CommandContext): Promise<MoveReport>;
  'split-keys'?(command: SplitKeys, context: CommandContext): Promise<void>;
  /** Optional likewise; reports progress on the way, and its report is the command's result. */
  'rescale-run'?(command: RescaleRun, context: CommandContext): Promise<RescaleReport>;
}

/**
 * Commands of different jobs handled at once by one worker. A job's own commands always run one at a time, in the
 * order sent; this bounds how many jobs' commands (a live rescale lasts seconds) are in hand together.
 */
export const DEFAULT_COMMAND_CONCURRENCY = 16;

export interface CommandConsumerOptions {
  /**
   * Commands handled at once (DEFAULT_COMMAND_CONCURRENCY), across jobs: the commands of one job (tenant and job id)
   * still run one at a time in the order they were sent, so one tenant's live rescale or savepoint never holds back
   * another's start or stop. 1 keeps every command of the worker in one order.
   */
  readonly concurrency?: number;
  readonly logger?: ProtocolLogger;
}

export interface CommandConsumer {
  /** Resolves once connected to Redis and consuming. */
  start(): Promise<void>;
  /** Waits for running handlers to finish, then disconnects. */
  close(): Promise<void>;
}

/** Worker side: consumes this worker's command queue. */
export function createCommandConsumer(
  config: ProtocolConfig,
  workerId: string,
  handlers: CommandHandlers,
  options: CommandConsumerOptions = {},
): CommandConsumer {
  const logger = options.logger ?? defaultLogger();
  const queueName = workerCommandsQueue(workerId);

  /** Per job (tenant/job id): the end of its latest command, which its next one waits for. */
  const jobTails = new Map<string, Promise<void>>();
  /** Runs `work` after every command of the same job taken before it (called in the order BullMQ hands them over). */
  const inJobOrder = <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const run = (jobTails.get(key) ?? Promise.resolve()).then(work);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    jobTails.set(key, tail);
    void tail.then(() => {
      if (jobTails.get(key) === tail) jobTails.delete(key);
    });
    return run;
  };

  const handleJob = (job: Job): Promise<MoveReport | RescaleReport | undefined> => {
    let command: WorkerCommand;
    try {
      command = parseMessage(workerCommandSchema, job.data, `command ${job.name}`);
    } catch (err) {
      logger.error({ workerId, jobId: job.id, ...errorFields(err) }, 'rejected an invalid command');
      return Promise.reject(new UnrecoverableError((err as Error).message));
    }
    return inJobOrder(`${command.tenantId}/${command.jobId}`, () => apply(job, command));
  };

  const apply = async (job: Job, command: WorkerCommand): Promise<MoveReport | RescaleReport | undefined> => {
    const context: CommandContext = { attempt: job.attemptsMade + 1, progress: (progress) => job.updateProgress(progress) };
    const fields = { workerId, type: command.type, idempotencyKey: command.idempotencyKey, attempt: context.attempt };
    try {
      let result: MoveReport | RescaleReport | undefined;
      if (command.type === 'run-subtasks') await handlers['run-subtasks'](command, context);
      else if (command.type === 'stop-subtasks') await handlers['stop-subtasks'](command, context);
      else if (command.type === 'move-key-groups') {
        if (!handlers['move-key-groups']) throw new CommandRejectedError('this worker does not move key groups');
        result = await handlers['move-key-groups'](command, context);
      } else if (command.type === 'split-keys') {
        if (!handlers['split-keys']) throw new CommandRejectedError('this worker does not split keys');
        await handlers['split-keys'](command, context);
      } else if (command.type === 'rescale-run') {
        if (!handlers['rescale-run']) throw new CommandRejectedError('this worker does not rescale runs live');
        result = await handlers['rescale-run'](command, context);
      } else if (handlers['take-savepoint']) await handlers['take-savepoint'](command, context);
      else throw new CommandRejectedError('this worker does not take savepoints');
      logger.info(fields, 'command applied');
      return result;
    } catch (err) {
      if (err instanceof CommandRejectedError || err instanceof ProtocolValidationError) {
        logger.error({ ...fields, ...errorFields(err) }, 'command rejected');
        throw new UnrecoverableError(err.message);
      }
      logger.warn({ ...fields, ...errorFields(err) }, 'command failed; BullMQ will retry it');
      throw err;
    }
  };

  const worker = new Worker(queueName, handleJob, {
    connection: consumerConnection(config),
    prefix: config.WEIR_QUEUE_PREFIX,
    concurrency: options.concurrency ?? DEFAULT_COMMAND_CONCURRENCY,
    autorun: false,
  });
  worker.on('error', (err) => logger.warn({ workerId, ...errorFields(err) }, 'command consumer connection error'));

  let started = false;
  return {
    async start() {
      if (started) return;
      started = true;
      void worker.run().catch((err) => logger.error({ workerId, ...errorFields(err) }, 'command consumer stopped'));
      await worker.waitUntilReady();
    },
    async close() {
      await withTimeout(worker.close(), 30_000, 'closing the command consumer').catch(async (err) => {
        logger.warn({ workerId, ...errorFields(err) }, 'command consumer did not close in time; forcing');
        await worker.close(true);
      });
    },
  };
}

import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { type ProtocolConfig } from './connection';
import { defaultLogger, errorFields, type ProtocolLogger } from './logger';
import { workerCommandSchema, type WorkerCommand } from './messages/commands';
import { workerCommandsQueue } from './names';
import { parseMessage } from './validate';

/** How long a completed command's id is kept, so that a repeated send within that window is dropped. */
const KEEP_COMPLETED_S = 24 * 3600;

export interface CommandDispatcher {
  /**
   * Queues a command for one worker; resolves once Redis holds it. The idempotency key is the BullMQ job id: a
   * second send with the same key while the first is queued, running or recently completed is a no-op.
   */
  send(workerId: string, command: WorkerCommand): Promise<void>;
  /** Commands queued for a worker and not yet taken. */
  pending(workerId: string): Promise<number>;
  close(): Promise<void>;
}

/** Control-plane side: sends commands to workers. */
export function createCommandDispatcher(config: ProtocolConfig, options: { logger?: ProtocolLogger } = {}): CommandDispatcher {
  const logger = options.logger ?? defaultLogger();
  // One connection for every worker's queue (BullMQ shares a client it is given): a fleet of hundreds of workers
  // must not cost hundreds of Redis connections per control-plane instance. No offline queue: fail fast.
  const redis = new Redis(config.WEIR_REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  redis.on('error', (err: Error) => logger.debug({ ...errorFields(err) }, 'command dispatcher connection error'));
  const queues = new Map<string, Queue>();
  const queueFor = (workerId: string) => {
    let queue = queues.get(workerId);
    if (!queue) {
      queue = new Queue(workerCommandsQueue(workerId), { connection: redis, prefix: config.WEIR_QUEUE_PREFIX });
      queue.on('error', (err) => logger.debug({ workerId, ...errorFields(err) }, 'command queue error'));
      queues.set(workerId, queue);
    }
    return queue;
  };
  return {
    async send(workerId, command) {
      const checked = parseMessage(workerCommandSchema, command, `command ${command.type}`);
      await queueFor(workerId).add(checked.type, checked, {
        jobId: checked.idempotencyKey,
        attempts: 5,
        backoff: { type: 'exponential', delay: 1_000 },
        removeOnComplete: { age: KEEP_COMPLETED_S },
        removeOnFail: { age: 7 * KEEP_COMPLETED_S },
      });
    },
    async pending(workerId) {
      return queueFor(workerId).getWaitingCount();
    },
    async close() {
      await Promise.allSettled([...queues.values()].map((q) => q.close()));
      queues.clear();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { consumerConnection, withTimeout, type ProtocolConfig } from './connection';
import { defaultLogger, errorFields, type ProtocolLogger } from './logger';
import { workerEventSchema, type WorkerEvent } from './messages/worker-events';
import { WORKER_EVENTS_QUEUE } from './names';
import { parseMessage } from './validate';

export interface WorkerEventConsumerOptions {
  /** Events handled at once. Order across them is not kept: handlers use `seq` to ignore stale events. */
  readonly concurrency?: number;
  readonly logger?: ProtocolLogger;
}

export interface WorkerEventConsumer {
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Control-plane side: consumes worker.* events. Several control-plane instances may consume the same queue; each
 * event goes to one of them. A handler error leaves the event to BullMQ's retries.
 */
export function createWorkerEventConsumer(
  config: ProtocolConfig,
  handle: (event: WorkerEvent) => Promise<void>,
  options: WorkerEventConsumerOptions = {},
): WorkerEventConsumer {
  const logger = options.logger ?? defaultLogger();
  const handleJob = async (job: Job): Promise<void> => {
    let event: WorkerEvent;
    try {
      event = parseMessage(workerEventSchema, job.data, `worker event ${job.name}`);
    } catch (err) {
      logger.error({ jobId: job.id, ...errorFields(err) }, 'dropped an invalid worker event');
      throw new UnrecoverableError((err as Error).message);
    }
    await handle(event);
  };
  const worker = new Worker(WORKER_EVENTS_QUEUE, handleJob, {
    connection: consumerConnection(config),
    prefix: config.WEIR_QUEUE_PREFIX,
    concurrency: options.concurrency ?? 8,
    autorun: false,
  });
  worker.on('error', (err) => logger.warn({ ...errorFields(err) }, 'worker-events consumer connection error'));
  worker.on('failed', (job, err) => {
    if (!(err instanceof UnrecoverableError)) {
      logger.warn({ jobId: job?.id, type: job?.name, ...errorFields(err) }, 'handling a worker event failed');
    }
  });

  let started = false;
  return {
    async start() {
      if (started) return;
      started = true;
      void worker.run().catch((err) => logger.error({ ...errorFields(err) }, 'worker-events consumer stopped'));
      await worker.waitUntilReady();
    },
    async close() {
      await withTimeout(worker.close(), 10_000, 'closing the worker-events consumer').catch(async (err) => {
        logger.warn({ ...errorFields(err) }, 'worker-events consumer did not close in time; forcing');
        await worker.close(true);
      });
    },
  };
}

/**
 * Where the protocol lives in Redis. Every BullMQ key starts with WEIR_QUEUE_PREFIX (BullMQ's `prefix`), so two
 * Weir installations, or two test runs, share one Redis without seeing each other's queues.
 */
export const WORKER_EVENTS_QUEUE = 'worker-events';

/** Worker ids are checked by the schemas below; BullMQ forbids ':' in queue names, which the pattern excludes. */
export const WORKER_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/** The command queue of one worker: only that worker consumes it. */
export function workerCommandsQueue(workerId: string): string {
  if (!WORKER_ID_PATTERN.test(workerId)) throw new RangeError(`invalid worker id ${JSON.stringify(workerId)}`);
  return `worker-commands.${workerId}`;
}

import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import { createCommandDispatcher, workerCommandsQueue, type CommandDispatcher } from '@weir/protocol';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { WEIR_CONFIG } from '../control-plane-options';
import type { SubtaskAssignment } from '../deployments/deployment';
import { stopSubtasksCommand } from '../placement/command-gateway';

const TIMEOUT_MS = 5_000;

/** The BullMQ job id of a savepoint trigger: a retried trigger is the same job, dropped by BullMQ and the worker. */
export const savepointCommandKey = (deploymentId: string, savepointId: string) => `${deploymentId}-savepoint-${savepointId}`;

export type TriggerOutcome = { readonly state: 'PENDING' } | { readonly state: 'FAILED'; readonly reason: string } | { readonly state: 'UNKNOWN' };

export class SavepointCommandTimeoutError extends Error {
  override readonly name = 'SavepointCommandTimeoutError';
}

/**
 * Sends take-savepoint commands to the worker of a run's process 0 (it leads the run's checkpoints and savepoints;
 * with `stop`, every process exits once the savepoint is on S3) and reads back how they ended.
 */
@Injectable()
export class SavepointCommands implements OnModuleDestroy {
  private dispatcher: CommandDispatcher | undefined;
  private redis: Redis | undefined;
  private readonly queues = new Map<string, Queue>();

  constructor(@Inject(WEIR_CONFIG) private readonly config: WeirConfig) {}

  async send(workerId: string, tenantId: string, deploymentId: string, savepointId: string, stop: boolean): Promise<void> {
    this.dispatcher ??= createCommandDispatcher(this.config);
    await bounded(
      this.dispatcher.send(workerId, {
        v: 1,
        type: 'take-savepoint',
        idempotencyKey: savepointCommandKey(deploymentId, savepointId),
        issuedAt: Date.now(),
        tenantId,
        jobId: deploymentId,
        savepointId,
        stop,
      }),
    );
  }

  /**
   * Stop-with-savepoint for a run the reconciler stops toward SUSPENDED (the same idempotency keys as a plain stop
   * of that run, so only one of them is ever applied), to every process with the same savepoint: process 0 takes it
   * for the whole job, the others wait for it and then stop. The job stops either way: with the savepoint when it
   * can be taken, else without it, and process 0's worker then rejects its command with the savepoint's failure.
   */
  async sendStop(
    run: { runNo: number; processes: readonly { index: number; workerId: string; subtasks: readonly SubtaskAssignment[] }[] },
    deployment: { tenantId: string; id: string },
    savepoint: { snapshotId: string; location: string },
    reason: string,
  ): Promise<void> {
    this.dispatcher ??= createCommandDispatcher(this.config);
    for (const process of run.processes) {
      await bounded(this.dispatcher.send(process.workerId, stopSubtasksCommand(deployment, run, process, reason, savepoint)));
    }
  }

  /** Why the worker rejected a command for good, or null (also when it succeeded, runs, or is unknown). */
  async failureOf(workerId: string, commandKey: string): Promise<string | null> {
    const job = await bounded(this.queue(workerId).getJob(commandKey));
    if (!job || !job.finishedOn || !job.failedReason) return null;
    return (await bounded(job.isFailed())) ? job.failedReason : null;
  }

  /** Whether the worker's queue holds the command, queued, running or finished (finished ones are kept a day). */
  async exists(workerId: string, commandKey: string): Promise<boolean> {
    return (await bounded(this.queue(workerId).getJob(commandKey))) !== undefined;
  }

  /** PENDING while the command is queued or running; FAILED with the worker's reason; UNKNOWN when none is pending. */
  async outcome(workerId: string, deploymentId: string, savepointId: string): Promise<TriggerOutcome> {
    const job = await bounded(this.queue(workerId).getJob(savepointCommandKey(deploymentId, savepointId)));
    if (!job) return { state: 'UNKNOWN' };
    if (job.finishedOn && job.failedReason && (await job.isFailed())) return { state: 'FAILED', reason: job.failedReason };
    // Done, yet its manifest was not found by the caller: the savepoint was disposed since.
    if (job.finishedOn) return { state: 'UNKNOWN' };
    return { state: 'PENDING' };
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    await this.dispatcher?.close();
    await this.redis?.quit().catch(() => this.redis?.disconnect());
  }

  private queue(workerId: string): Queue {
    let queue = this.queues.get(workerId);
    if (!queue) {
      if (!this.redis) {
        this.redis = new Redis(this.config.WEIR_REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
        this.redis.on('error', () => undefined);
      }
      queue = new Queue(workerCommandsQueue(workerId), { connection: this.redis, prefix: this.config.WEIR_QUEUE_PREFIX });
      queue.on('error', () => undefined);
      this.queues.set(workerId, queue);
    }
    return queue;
  }
}

async function bounded<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SavepointCommandTimeoutError(`Redis did not answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

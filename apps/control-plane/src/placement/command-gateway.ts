import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import { createCommandDispatcher, workerCommandsQueue, type CommandDispatcher } from '@weir/protocol';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { WEIR_CONFIG } from '../control-plane-options';
import type { Deployment, DeploymentRun } from '../deployments/deployment';
import type { PlacementBundle } from './subtask-plan';

/**
 * Deterministic idempotency keys: the same run of the same deployment always yields the same key, so a command
 * sent twice (a retry after a crash between send and commit, or a second control-plane instance) is applied once:
 * BullMQ drops a job id it already holds, and the worker skips keys it has applied.
 */
export const runCommandKey = (deploymentId: string, runNo: number) => `${deploymentId}-run-${runNo}`;
export const stopCommandKey = (deploymentId: string, runNo: number) => `${deploymentId}-run-${runNo}-stop`;

/** The control plane's side of the worker protocol, for deployments: run, stop, and what became of a command. */
@Injectable()
export class CommandGateway implements OnModuleDestroy {
  private dispatcher: CommandDispatcher | undefined;
  private redis: Redis | undefined;
  private readonly queues = new Map<string, Queue>();

  constructor(@Inject(WEIR_CONFIG) private readonly config: WeirConfig) {}

  async sendRun(deployment: Deployment, run: DeploymentRun, bundle: PlacementBundle): Promise<void> {
    await this.commands().send(run.workerId, {
      v: 1,
      type: 'run-subtasks',
      idempotencyKey: runCommandKey(deployment.id, run.runNo),
      issuedAt: Date.now(),
      tenantId: deployment.tenantId,
      jobId: deployment.id,
      bundle: { key: bundle.key, sha256: bundle.sha256 },
      maxParallelism: bundle.maxParallelism,
      subtasks: run.subtasks.map((s) => ({ operatorId: s.operatorId, subtask: s.subtask, keyGroups: s.keyGroups.map(([a, b]) => [a, b] as [number, number]) })),
      ...(run.restoreFrom ? { restoreFrom: run.restoreFrom } : {}),
    });
  }

  async sendStop(deployment: Deployment, run: DeploymentRun, reason: string): Promise<void> {
    await this.commands().send(run.workerId, {
      v: 1,
      type: 'stop-subtasks',
      idempotencyKey: stopCommandKey(deployment.id, run.runNo),
      issuedAt: Date.now(),
      tenantId: deployment.tenantId,
      jobId: deployment.id,
      subtasks: run.subtasks.map((s) => ({ operatorId: s.operatorId, subtask: s.subtask })),
      reason: reason.slice(0, 500),
    });
  }

  /** Why the worker refused a run command for good (bad bundle, wrong max parallelism), or null. */
  async runFailure(deploymentId: string, run: DeploymentRun): Promise<string | null> {
    const job = await this.queue(run.workerId).getJob(runCommandKey(deploymentId, run.runNo));
    if (!job || !job.finishedOn || !job.failedReason) return null;
    return (await job.isFailed()) ? job.failedReason : null;
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
    await this.dispatcher?.close();
    await this.redis?.quit().catch(() => this.redis?.disconnect());
  }

  // Connections open on first use, so building the app (the OpenAPI generator) connects to nothing.
  private commands(): CommandDispatcher {
    this.dispatcher ??= createCommandDispatcher(this.config);
    return this.dispatcher;
  }

  private queue(workerId: string): Queue {
    let queue = this.queues.get(workerId);
    if (!queue) {
      if (!this.redis) {
        this.redis = new Redis(this.config.WEIR_REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
        this.redis.on('error', () => undefined); // a failed lookup is retried on the next reconcile
      }
      queue = new Queue(workerCommandsQueue(workerId), { connection: this.redis, prefix: this.config.WEIR_QUEUE_PREFIX });
      queue.on('error', () => undefined);
      this.queues.set(workerId, queue);
    }
    return queue;
  }
}

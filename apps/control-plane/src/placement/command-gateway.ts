import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import {
  createCommandDispatcher,
  workerCommandsQueue,
  type CommandDispatcher,
  type MoveKeyGroups,
  type SplitKeys,
  type RescaleRun,
  type RunSubtasks,
  type StopSubtasks,
  type WorkerCommand,
} from '@weir/protocol';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { WEIR_CONFIG } from '../control-plane-options';
import type { Deployment, DeploymentRun, Routing, RunProcessLayout } from '../deployments/deployment';
import { checkpointingOf } from '../savepoints/checkpointing-settings';
import { runParallelism, type PlacementBundle } from './subtask-plan';

/**
 * Deterministic idempotency keys, one per process of a run: the same process of the same run always yields the same
 * key, so a command sent twice (a retry after a crash between send and commit, or a second control-plane instance)
 * is applied once: BullMQ drops a job id it already holds, and the worker skips keys it has applied. Process 0 keeps
 * the key a run in one process always had, so lookups of process 0's commands (the stop whose savepoint failed,
 * savepoints/) read the same whatever the layout.
 */
export const runCommandKey = (deploymentId: string, runNo: number, processIndex = 0, joinedBy?: string) =>
  processIndex === 0 ? `${deploymentId}-run-${runNo}` : `${deploymentId}-run-${runNo}-p${processIndex}${joinedBy ? `-${joinedBy}` : ''}`;
export const stopCommandKey = (deploymentId: string, runNo: number, processIndex = 0, joinedBy?: string) =>
  processIndex === 0 ? `${deploymentId}-run-${runNo}-stop` : `${deploymentId}-run-${runNo}-p${processIndex}${joinedBy ? `-${joinedBy}` : ''}-stop`;

/**
 * A process of a run, as commands address it. A process that joined by a live rescale carries that rescale in its
 * keys (`joinedBy`): scaled in and out again, a run reuses a retiree's index, and the joiner's commands must not be
 * taken for the retiree's (already applied, so dropped).
 */
type ProcessOfRun = Pick<RunProcessLayout, 'index' | 'workerId' | 'subtasks' | 'joinedBy'>;

/** How a process joins a running run (a live rescale out): the run's new process count and parallelism, and its old one. */
export interface JoinShape {
  readonly count: number;
  /** Subtasks per operator across the run once rescaled. */
  readonly parallelism: Record<string, number>;
  /** The run's parallelism before the rescale: the joiner plans the run's sources at it (they keep theirs). */
  readonly joining: Record<string, number>;
  /** The run's routing now (every key group still with the run's old owners). */
  readonly routing: Routing;
}

/**
 * The stop-subtasks command of one process of a run: a plain stop, or with `savepoint` a stop-with-savepoint
 * (savepoints/), under the same key, so only one of them is ever applied. Every process gets the same savepoint:
 * process 0 takes it for the whole job, the others wait for it and then stop.
 */
export function stopSubtasksCommand(
  deployment: { readonly tenantId: string; readonly id: string },
  run: { readonly runNo: number },
  process: ProcessOfRun,
  reason: string,
  savepoint?: StopSubtasks['savepoint'],
): StopSubtasks {
  return {
    v: 1,
    type: 'stop-subtasks',
    idempotencyKey: stopCommandKey(deployment.id, run.runNo, process.index, process.joinedBy),
    issuedAt: Date.now(),
    tenantId: deployment.tenantId,
    jobId: deployment.id,
    process: process.index,
    subtasks: process.subtasks.map((s) => ({ operatorId: s.operatorId, subtask: s.subtask })),
    ...(savepoint ? { savepoint } : {}),
    reason: reason.slice(0, 500),
  };
}

/** A worker's refusal of one process's run command, naming the process. */
export interface RunRefusal {
  readonly process: number;
  readonly workerId: string;
  readonly reason: string;
}

/**
 * What became of a command on a worker's queue: not there (never sent, or Redis lost it), still queued or running
 * (retries included), completed with the handler's result, or failed for good with the worker's reason.
 */
export type CommandState =
  | { readonly kind: 'missing' }
  /** `progress`: what the handler last published (BullMQ's job progress; a rescale's { moved, total }), unchecked. */
  | { readonly kind: 'queued'; readonly progress?: unknown }
  | { readonly kind: 'completed'; readonly result: unknown }
  | { readonly kind: 'failed'; readonly reason: string };

/** Bounds on Redis round trips: a reconcile step holds a row lock, so it must fail (and retry later), never hang. */
const SEND_TIMEOUT_MS = 5_000;
const LOOKUP_TIMEOUT_MS = 2_000;

export class CommandGatewayTimeoutError extends Error {
  override readonly name = 'CommandGatewayTimeoutError';
}

/**
 * The control plane's side of the worker protocol, for deployments: run, stop, move, rescale, and what became of a
 * command, per process.
 */
@Injectable()
export class CommandGateway implements OnApplicationBootstrap, OnModuleDestroy {
  private dispatcher: CommandDispatcher | undefined;
  private redis: Redis | undefined;
  private readonly queues = new Map<string, Queue>();

  constructor(@Inject(WEIR_CONFIG) private readonly config: WeirConfig) {}

  /** Connects once the app starts (building it, as the OpenAPI generator does, connects to nothing). */
  onApplicationBootstrap(): void {
    this.commands();
  }

  /**
   * run-subtasks to each process's worker: the process (index of count), the run number, the whole run's parallelism
   * and routing per operator, and only that process's subtasks with their key groups (as the routing has them). One
   * at a time, each bounded: a failure leaves the run undispatched, and the next attempt resends every process's
   * command under the same keys.
   */
  async sendRun(deployment: Deployment, run: DeploymentRun, bundle: PlacementBundle): Promise<void> {
    const parallelism = runParallelism(run.subtasks);
    for (const process of run.processes) {
      await this.send(process.workerId, {
        ...runSubtasksCommand(deployment, run, process, bundle),
        process: { index: process.index, count: run.processes.length },
        parallelism,
        // The owners live moves left (every operator of the manifest; the engine reads its keyed stages'); a run
        // recorded before routings were has none, and the engine starts from contiguous ranges as it always did.
        ...(run.routing ? { routing: copyRouting(run.routing) } : {}),
        ...(run.restoreFrom ? { restoreFrom: { snapshotId: run.restoreFrom.snapshotId, location: run.restoreFrom.location } } : {}),
        ...(run.restoreFrom?.allowNonRestoredState ? { allowNonRestoredState: true } : {}),
      });
    }
  }

  /**
   * run-subtasks with `joining` to a process joining the running run (a live rescale out): the same run number,
   * bundle, config and checkpointing as the run, no restore, its subtasks with no key groups yet (process 0 moves
   * them), under the joiner's own key. Sent before the rescale-run command: a worker runs a job's commands one at a
   * time in the order sent, so a joiner on process 0's worker would otherwise wait behind the rescale that waits for it.
   */
  async sendJoin(deployment: Deployment, run: DeploymentRun, process: RunProcessLayout, bundle: PlacementBundle, shape: JoinShape): Promise<void> {
    await this.send(process.workerId, {
      ...runSubtasksCommand(deployment, run, process, bundle),
      process: { index: process.index, count: shape.count },
      parallelism: { ...shape.parallelism },
      routing: copyRouting(shape.routing),
      joining: { parallelism: { ...shape.joining } },
    });
  }

  /**
   * rescale-run to the worker of the run's process 0, which leads the rescale for every process; the caller gives the
   * deterministic key (one per rescale), so a resend is the same BullMQ job.
   */
  async sendRescale(workerId: string, command: Omit<RescaleRun, 'v' | 'type' | 'issuedAt'>): Promise<void> {
    await this.send(workerId, { v: 1, type: 'rescale-run', issuedAt: Date.now(), ...command, reason: command.reason.slice(0, 500) });
  }

  /** stop-subtasks to one process of the run (a retiree of a live rescale in, once its report is recorded). */
  async sendStopProcess(deployment: Deployment, run: DeploymentRun, process: RunProcessLayout, reason: string): Promise<void> {
    await this.send(process.workerId, stopSubtasksCommand(deployment, run, process, reason));
  }

  /** stop-subtasks to every process's worker (a lost worker's too: it is queued there in case the worker comes back). */
  async sendStop(deployment: Deployment, run: DeploymentRun, reason: string): Promise<void> {
    for (const process of run.processes) await this.send(process.workerId, stopSubtasksCommand(deployment, run, process, reason));
  }

  /**
   * Why a worker refused a process's run command for good (bad bundle, wrong max parallelism), the lowest process
   * first; null when none did (also when Redis does not say).
   */
  async runFailure(deploymentId: string, run: DeploymentRun): Promise<RunRefusal | null> {
    const lookup = async (): Promise<RunRefusal | null> => {
      for (const process of run.processes) {
        const job = await this.queue(process.workerId).getJob(runCommandKey(deploymentId, run.runNo, process.index, process.joinedBy));
        if (job?.finishedOn && job.failedReason && (await job.isFailed())) return { process: process.index, workerId: process.workerId, reason: job.failedReason };
      }
      return null;
    };
    // Only a shortcut to FAILED: when Redis does not answer, the start timeout still applies.
    return bounded(lookup(), LOOKUP_TIMEOUT_MS, 'look up run commands').catch(() => null);
  }

  /**
   * split-keys to the worker of the run's process 0, which applies the table and hands it to every process; the
   * caller gives one key per decision. Nothing waits for it: the heartbeats' snapshots say when it is in effect.
   */
  async sendSplitKeys(workerId: string, command: Omit<SplitKeys, 'v' | 'type' | 'issuedAt'>): Promise<void> {
    await this.send(workerId, { v: 1, type: 'split-keys', issuedAt: Date.now(), ...command, reason: command.reason.slice(0, 500) });
  }

  /**
   * move-key-groups to the worker of the run's process 0, which leads the move for every process; the caller gives
   * the deterministic key (one per move), so a resend is the same BullMQ job.
   */
  async sendMove(workerId: string, command: Omit<MoveKeyGroups, 'v' | 'type' | 'issuedAt'>): Promise<void> {
    await this.send(workerId, { v: 1, type: 'move-key-groups', issuedAt: Date.now(), ...command, reason: command.reason.slice(0, 500) });
  }

  /**
   * The state of a command on a worker's queue (completed and failed ones are kept a day and a week); bounded. Two
   * reads, the state first and the job's hash after it (commandStateOf says why that order).
   */
  async commandState(workerId: string, idempotencyKey: string): Promise<CommandState> {
    const lookup = async (): Promise<CommandState> => {
      const queue = this.queue(workerId);
      const state = await queue.getJobState(idempotencyKey);
      return commandStateOf(state, await queue.getJob(idempotencyKey));
    };
    return bounded(lookup(), LOOKUP_TIMEOUT_MS, `look up command ${idempotencyKey}`);
  }

  private send(workerId: string, command: WorkerCommand): Promise<void> {
    return bounded(this.commands().send(workerId, command), SEND_TIMEOUT_MS, `send ${command.type} to worker ${workerId}`);
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

/** What commandStateOf reads of a BullMQ job's hash. */
export interface CommandJobFields {
  readonly returnvalue: unknown;
  readonly failedReason?: string;
  readonly finishedOn?: number;
  readonly progress: unknown;
}

/**
 * A command's state from two reads that BullMQ cannot make atomic: its state (which set holds the job), then its
 * hash. The worker finishes a job in one script that moves it to the completed (failed) set and writes its return
 * value (failure reason) and finishedOn, so a hash read after a completed (failed) state always holds them. The other
 * order is a race: a hash read while the command was running, paired with a state read just after it completed,
 * gives a completed command without its result, which the reconciler takes for a malformed report (a live rescale
 * that worked falls back to a restart; a move that worked is FAILED). A finished state whose hash has no finishedOn
 * (the job was retried in between) is still queued; a job gone in between is missing (removed, or Redis lost it).
 */
export function commandStateOf(state: string, job: CommandJobFields | undefined): CommandState {
  if (!job) return { kind: 'missing' };
  if (state === 'completed' && job.finishedOn) return { kind: 'completed', result: job.returnvalue };
  if (state === 'failed' && job.finishedOn) return { kind: 'failed', reason: job.failedReason || 'the worker gave no reason' };
  return { kind: 'queued', progress: job.progress };
}

/** What every process's run-subtasks says alike: its key, the job, the bundle, its subtasks, config and checkpointing. */
function runSubtasksCommand(deployment: Deployment, run: DeploymentRun, process: ProcessOfRun, bundle: PlacementBundle) {
  return {
    v: 1,
    type: 'run-subtasks',
    idempotencyKey: runCommandKey(deployment.id, run.runNo, process.index, process.joinedBy),
    issuedAt: Date.now(),
    tenantId: deployment.tenantId,
    jobId: deployment.id,
    runNo: run.runNo,
    bundle: { key: bundle.key, sha256: bundle.sha256 },
    operatorIds: [...bundle.operatorIds],
    maxParallelism: bundle.maxParallelism,
    subtasks: process.subtasks.map((s) => ({ operatorId: s.operatorId, subtask: s.subtask, keyGroups: s.keyGroups.map(([a, b]) => [a, b] as [number, number]) })),
    checkpointing: checkpointingOf(deployment.config),
    // The job's deployment-time parameters (topics by logical name, properties): a parameterized bundle is built with them.
    config: { topics: { ...deployment.config.topics }, properties: { ...deployment.config.properties } },
  } as const satisfies Partial<RunSubtasks>;
}

function copyRouting(routing: Routing): Record<string, number[]> {
  return Object.fromEntries(Object.entries(routing).map(([op, owners]) => [op, [...owners]]));
}

async function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CommandGatewayTimeoutError(`${what}: no answer from Redis within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

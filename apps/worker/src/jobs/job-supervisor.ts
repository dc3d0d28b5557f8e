import {
  CommandRejectedError,
  type CommandContext,
  type MoveKeyGroups,
  type SplitKeys,
  type MoveReport,
  type RescaleReport,
  type RescaleRun,
  type RunSubtasks,
  type RunningSubtask,
  type StopSubtasks,
  type TakeSavepoint,
} from '@weir/protocol';
import type { BlobStore } from '@weir/blob';
import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import type { BundleCache } from '../bundles/bundle-cache';
import { forkJobHost, type WarmJobHosts } from './job-host-forks';
import { DEFAULT_JOB_HOST_LIMITS, type JobHostLimits } from './job-host-limits';
import { JobProcess } from './job-process';
import type { TenantKafkaAccess } from '../kafka-access/tenant-kafka-access';

/** A heartbeat carries at most this many snapshots (libs/protocol's limit). */
const HEARTBEAT_MAX_SNAPSHOTS = 4_096;

export interface JobSupervisorOptions {
  readonly bundles: BundleCache;
  /** The worker's object store: its job hosts' checkpoints, restores and moves go through it (blob-broker/). */
  readonly blobs: BlobStore;
  /** Where each job host's own folder (its bundle copy and its state, all it may write) is made. */
  readonly hostsRoot: string;
  /** Dead-letter topic of a job; tenant-namespaced by the caller. */
  readonly deadLetterTopic: (tenantId: string, jobId: string) => string;
  /** Job hosts forked ahead of need (with the same limits); without it every job forks its own as it starts. */
  readonly warmHosts?: WarmJobHosts;
  /** What each job host may use (heap, event-loop stall); default DEFAULT_JOB_HOST_LIMITS. */
  readonly limits?: JobHostLimits;
  /** Each tenant's own Kafka identity for its job hosts; without it they use the platform's brokers, unconfined. */
  readonly kafkaAccess?: TenantKafkaAccess;
}

/**
 * Runs each job the control plane assigns in a job host child process of its own, and answers for them in
 * heartbeats. Commands are applied once per idempotency key (delivery is at least once).
 */
export class JobSupervisor {
  private readonly jobs = new Map<string, JobProcess>();
  private readonly applied = new Set<string>();
  /** Moves applied here, by idempotency key (a redelivered command gets the same report). */
  private readonly moveReports = new Map<string, MoveReport>();
  /** Live rescales applied here, by idempotency key, likewise. */
  private readonly rescaleReports = new Map<string, RescaleReport>();
  /** Run commands still starting, by idempotency key: a redelivery while the first is starting waits for it. */
  private readonly starting = new Map<string, Promise<void>>();
  /** The jobs close() stops for the worker's shutdown: reported STOPPING until the worker says goodbye. */
  private readonly closing = new Set<JobProcess>();
  /** The sha256 of the bundle each run command still starting fetched or is fetching, by idempotency key. */
  private readonly startingBundles = new Map<string, string>();
  /** The sha256 of the bundle each job runs. */
  private readonly jobBundles = new WeakMap<JobProcess, string>();

  private readonly limits: JobHostLimits;

  constructor(private readonly options: JobSupervisorOptions) {
    this.limits = options.limits ?? DEFAULT_JOB_HOST_LIMITS;
  }

  async run(command: RunSubtasks): Promise<void> {
    if (this.applied.has(command.idempotencyKey)) return;
    const inFlight = this.starting.get(command.idempotencyKey);
    if (inFlight) return inFlight;
    const started = this.start(command);
    this.starting.set(command.idempotencyKey, started);
    this.startingBundles.set(command.idempotencyKey, command.bundle.sha256);
    try {
      await started;
    } finally {
      this.starting.delete(command.idempotencyKey);
      this.startingBundles.delete(command.idempotencyKey);
    }
  }

  private async start(command: RunSubtasks): Promise<void> {
    const layout = command.process ?? { index: 0, count: 1 };
    const key = jobKey(command.tenantId, command.jobId, layout.index);
    const current = this.jobs.get(key);
    if (current && (current.state === 'STARTING' || current.state === 'RUNNING')) {
      throw new CommandRejectedError(`process ${layout.index} of job ${command.jobId} already runs on this worker; stop it first`);
    }
    let bundlePath: string;
    try {
      bundlePath = await this.options.bundles.fetch(command.bundle.key, command.bundle.sha256);
    } catch (err) {
      if ((err as Error).name === 'BundleIntegrityError' || (err as Error).name === 'BlobNotFoundError') {
        throw new CommandRejectedError((err as Error).message);
      }
      throw err; // transient (S3 unreachable): BullMQ retries
    }
    // The whole run's shape (every process plans the same job); a run in one process has it in its subtasks.
    const parallelism: Record<string, number> = { ...command.parallelism };
    if (!command.parallelism) for (const s of command.subtasks) parallelism[s.operatorId] = Math.max(parallelism[s.operatorId] ?? 0, s.subtask + 1);
    const subtasks: Record<string, number[]> = {};
    for (const s of command.subtasks) (subtasks[s.operatorId] ??= []).push(s.subtask);
    // The broker unreachable: thrown as it is, so BullMQ retries the command.
    const kafka = await this.options.kafkaAccess?.forTenant(command.tenantId);
    const job = new JobProcess(
      {
        type: 'start',
        tenantId: command.tenantId,
        ...(kafka ? { kafka } : {}),
        jobId: command.jobId,
        bundlePath,
        parallelism,
        maxParallelism: command.maxParallelism,
        ...(command.operatorIds ? { operatorIds: command.operatorIds } : {}),
        ...(layout.count > 1 ? { process: layout, subtasks } : {}),
        ...(command.runNo !== undefined ? { runNo: command.runNo } : {}),
        ...(command.routing ? { routing: command.routing } : {}),
        ...capacityOf(command),
        deadLetterTopic: this.options.deadLetterTopic(command.tenantId, command.jobId),
        ...(command.config ? { config: command.config } : {}),
        ...(command.checkpointing ? { checkpointing: command.checkpointing } : {}),
        ...(command.restoreFrom ? { restoreFrom: command.restoreFrom } : {}),
        ...(command.allowNonRestoredState ? { allowNonRestoredState: true } : {}),
        ...(command.joining ? { joining: command.joining } : {}),
      },
      this.options.blobs,
      this.options.warmHosts?.take() ?? forkJobHost({ limits: this.limits, hostsRoot: this.options.hostsRoot }),
      this.limits,
    );
    this.jobs.set(key, job);
    this.jobBundles.set(job, command.bundle.sha256);
    try {
      await job.run();
    } catch (err) {
      throw new CommandRejectedError((err as Error).message);
    }
    this.applied.add(command.idempotencyKey);
  }

  /**
   * Stops a job. With `savepoint` (a suspend, an upgrade): the savepoint first; when it cannot be taken the job
   * stops all the same (the control plane keeps its latest checkpoint instead) and the command is then rejected
   * with the savepoint's failure, which the control plane reads back as the reason. The tenant's own
   * stop-with-savepoint, which must not stop without its savepoint, is take-savepoint with `stop`.
   */
  async stop(command: StopSubtasks): Promise<void> {
    if (this.applied.has(command.idempotencyKey)) return;
    const key = jobKey(command.tenantId, command.jobId, command.process ?? 0);
    const job = this.jobs.get(key);
    let savepointFailure: string | undefined;
    if (job && command.savepoint) {
      try {
        await job.stopWithSavepoint(command.savepoint.snapshotId);
      } catch (err) {
        savepointFailure = (err as Error).message;
      }
    }
    await job?.stop();
    this.jobs.delete(key);
    this.applied.add(command.idempotencyKey);
    if (savepointFailure) throw new CommandRejectedError(`${savepointFailure}; stopped without it`);
  }

  /**
   * Takes a savepoint of a job running here (and stops it, with `stop`); resolves once the manifest is on S3. A
   * savepoint that fails is rejected for good: the trigger reports FAILED and a new trigger id may try again.
   */
  async takeSavepoint(command: TakeSavepoint): Promise<void> {
    if (this.applied.has(command.idempotencyKey)) return;
    // Process 0 leads the run's checkpoints: it takes the savepoint for every process (and with `stop`, they all stop).
    const key = jobKey(command.tenantId, command.jobId, 0);
    const job = this.jobs.get(key);
    if (!job || job.state !== 'RUNNING') throw new CommandRejectedError(`job ${command.jobId} does not run on this worker`);
    try {
      if (command.stop) {
        await job.stopWithSavepoint(command.savepointId);
        this.jobs.delete(key);
      } else {
        await job.savepoint(command.savepointId);
      }
    } catch (err) {
      throw new CommandRejectedError((err as Error).message);
    }
    this.applied.add(command.idempotencyKey);
  }

  /**
   * Moves key groups of a run led by its process 0 here. The report is the command's result; a retry of an applied
   * command returns it again. A move that fails is rejected for good (the job host left the run to be restored).
   */
  async moveKeyGroups(command: MoveKeyGroups): Promise<MoveReport> {
    const done = this.moveReports.get(command.idempotencyKey);
    if (done) return done;
    const job = this.leaderOf(command);
    try {
      const report = await job.moveKeyGroups({ moveId: command.moveId, operatorId: command.operatorId, moves: command.moves });
      this.moveReports.set(command.idempotencyKey, report);
      return report;
    } catch (err) {
      throw new CommandRejectedError((err as Error).message);
    }
  }

  /**
   * Sets a splittable window's split keys in a run led by its process 0 here (it hands them to every process).
   * Applying the same table twice changes nothing, so a retry needs no memo. Refused, it is rejected for good.
   */
  async splitKeys(command: SplitKeys): Promise<void> {
    const job = this.leaderOf(command);
    try {
      await job.splitKeys({ splitId: command.idempotencyKey, operatorId: command.operatorId, splits: command.splits });
    } catch (err) {
      throw new CommandRejectedError((err as Error).message);
    }
  }

  /**
   * Rescales a run led by its process 0 here, live; progress goes to the command's job as it moves. Refused or
   * failed, it is rejected for good: the control plane then rescales by restart (a failure half-way has the job
   * host leave the run to be restored).
   */
  async rescale(command: RescaleRun, context: CommandContext): Promise<RescaleReport> {
    const done = this.rescaleReports.get(command.idempotencyKey);
    if (done) return done;
    const job = this.leaderOf(command);
    try {
      const report = await job.rescale({ rescaleId: command.rescaleId, processes: command.processes, parallelism: command.parallelism }, (p) => {
        void context.progress(p).catch(() => undefined);
      });
      this.rescaleReports.set(command.idempotencyKey, report);
      return report;
    } catch (err) {
      throw new CommandRejectedError((err as Error).message);
    }
  }

  /** Process 0 of the command's run, running here; else the command is refused for good. */
  private leaderOf(command: { tenantId: string; jobId: string; runNo: number }): JobProcess {
    const job = this.jobs.get(jobKey(command.tenantId, command.jobId, 0));
    if (!job || job.state !== 'RUNNING') throw new CommandRejectedError(`process 0 of job ${command.jobId} does not run on this worker`);
    if ((job.start.runNo ?? 0) !== command.runNo) {
      throw new CommandRejectedError(`job ${command.jobId} runs run ${job.start.runNo ?? 0} here, not run ${command.runNo}`);
    }
    return job;
  }

  /**
   * The sha256 of every bundle a job here is starting with or runs (until its job host has exited): the bundle
   * cache must not evict those files.
   */
  bundlesInUse(): ReadonlySet<string> {
    const inUse = new Set(this.startingBundles.values());
    for (const job of this.jobs.values()) {
      const sha256 = this.jobBundles.get(job);
      if (sha256 && job.state !== 'FINISHED' && job.state !== 'FAILED' && job.state !== 'LOST') inUse.add(sha256);
    }
    return inUse;
  }

  runningSubtasks(): RunningSubtask[] {
    const out: RunningSubtask[] = [];
    for (const job of this.jobs.values()) {
      const state = this.closing.has(job) ? 'STOPPING' : job.state === 'FINISHED' ? undefined : job.state;
      if (!state) continue;
      // A run in one process says nothing of processes (absent means process 0).
      const process = job.start.process ? { process: job.start.process.index } : {};
      const { tenantId, jobId } = job.start;
      // Why it failed, once per job host (on its first subtask): a heartbeat stays small.
      const failure = state === 'FAILED' && job.failure ? { failure: job.failure.slice(0, 1_000) } : {};
      job.subtasks.forEach((s, i) => out.push({ tenantId, jobId, operatorId: s.operatorId, subtask: s.subtask, state, ...process, ...(i === 0 ? failure : {}) }));
    }
    return out;
  }

  /** The latest snapshot of every subtask (Prometheus scrapes). */
  metrics(): SubtaskMetricsSnapshot[] {
    return [...this.jobs.values()].flatMap((job) => job.latestMetrics);
  }

  /** Every snapshot taken since the previous heartbeat (the newest `max`), so that no interval is skipped. */
  drainMetrics(max = HEARTBEAT_MAX_SNAPSHOTS): SubtaskMetricsSnapshot[] {
    return [...this.jobs.values()].flatMap((job) => job.drainMetrics()).slice(-max);
  }

  /**
   * Stops every job for the worker's shutdown. They stay in the heartbeats as STOPPING until the worker's goodbye
   * (worker.stopping): a job missing from a live worker's report reads to the control plane as one that ended on
   * its own (FINISHED), whereas a worker going away must have its jobs re-placed (RECOVERING once it is STOPPED).
   */
  async close(): Promise<void> {
    const live = [...this.jobs.values()].filter((job) => job.state !== 'FINISHED' && job.state !== 'FAILED' && job.state !== 'LOST');
    for (const job of live) this.closing.add(job);
    await Promise.all(live.map((job) => job.stop()));
    this.options.warmHosts?.close();
  }
}

const jobKey = (tenantId: string, jobId: string, process: number) => `${tenantId}/${jobId}/${process}`;

/** A deployment's `subtask.max-records-per-second` property (checked by the control plane): each keyed subtask's cap. */
function capacityOf(command: RunSubtasks): { subtaskRecordsPerSecond?: number } {
  const cap = Number(command.config?.properties?.['subtask.max-records-per-second']);
  return Number.isFinite(cap) && cap > 0 ? { subtaskRecordsPerSecond: cap } : {};
}

import type { ChildProcess } from 'node:child_process';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobStore } from '@weir/blob';
import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import type { MoveReport, RescaleProgress, RescaleReport } from '@weir/protocol';
import { BlobBroker } from '../blob-broker/blob-broker';
import { isBlobRequest } from '../blob-broker/blob-wire';
import { forkJobHost, removeJobHostDir, type ForkedJobHost } from './job-host-forks';
import { DEFAULT_JOB_HOST_LIMITS, heapExhausted, heapLimitReason, stallReason, type JobHostLimits } from './job-host-limits';
import type { FromJobHost, MoveMessage, RescaleMessage, SplitKeysMessage, StartJobMessage, ToJobHost } from './ipc';

/**
 * FAILED: the job reported its failure (or failed to start). LOST: the job host died without a word (killed, out of
 * memory): nothing says the job cannot run again, so the run is recovered rather than failed.
 */
export type JobProcessState = 'STARTING' | 'RUNNING' | 'STOPPING' | 'FINISHED' | 'FAILED' | 'LOST';

export class JobStartError extends Error {
  override readonly name = 'JobStartError';
}

/** A split-keys the job refused (a bad table, an operator that is not a splittable window): nothing changed. */
export class KeySplitRefusedError extends Error {
  override readonly name = 'KeySplitRefusedError';
}

/** A live rescale that did not happen: `refused` when nothing changed, else the run is being restored. */
export class RescaleFailedError extends Error {
  override readonly name = 'RescaleFailedError';
  constructor(
    message: string,
    readonly refused: boolean,
  ) {
    super(message);
  }
}

const MAX_UNSENT_METRICS = 2_048;
/** The end of a job host's stderr kept to tell why it died (V8's out-of-memory report is a few lines). */
const STDERR_TAIL_CHARS = 8_192;
const START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 30_000;

/** A job to start: the job host's folder decides where its bundle copy and its state go (StartJobMessage.stateDir). */
export type JobStart = Omit<StartJobMessage, 'type' | 'stateDir'> & { readonly type?: 'start' };

/** The supervisor's handle on one job host child process. */
export class JobProcess {
  state: JobProcessState = 'STARTING';
  failure: string | undefined;
  /** The subtasks this job host runs (of its process of the run), once started. */
  subtasks: readonly { operatorId: string; subtask: number }[] = [];
  latestMetrics: readonly SubtaskMetricsSnapshot[] = [];
  /**
   * Every snapshot not yet handed to a heartbeat. Snapshots reset their interval, so sending only the latest would
   * drop the intervals between two heartbeats; the control plane merges them all (and counts a repeat once).
   */
  private unsentMetrics: SubtaskMetricsSnapshot[] = [];
  /** The newest checkpoint this job host completed (manifest on S3), and what its restore reported. */
  latestCheckpoint: { checkpointId: number; manifestKey: string; durationMs: number } | null = null;
  restored: Extract<FromJobHost, { type: 'restored' }> | null = null;
  /** The last checkpoint that failed, with the reason (cleared by none: it is for diagnosis). */
  lastCheckpointFailure: { checkpointId: number; message: string } | null = null;
  private readonly savepoints = new Map<string, { resolve: (key: string) => void; reject: (err: Error) => void }>();
  private readonly moves = new Map<string, { resolve: (report: MoveReport) => void; reject: (err: Error) => void }>();
  private readonly splits = new Map<string, { resolve: () => void; reject: (err: Error) => void }>();
  private readonly rescales = new Map<
    string,
    { resolve: (report: RescaleReport) => void; reject: (err: Error) => void; progress: (p: RescaleProgress) => void }
  >();
  /** Savepoints this job host saw complete (its run's leader may have taken one and stopped every process with it). */
  private readonly savepointKeys = new Map<string, string>();
  readonly exited: Promise<void>;
  /** What the job host is sent: the job, with its bundle copied into the job host's folder and its state beside it. */
  readonly start: StartJobMessage;
  private readonly child: ChildProcess;
  /** The bundle as the worker's cache holds it, which the job host may not read: copied into its folder. */
  private readonly cachedBundle: string;
  private stderrTail = '';
  /** When the job host last said it was alive (undefined until it first does). */
  private aliveAt: number | undefined;
  private checkedAt = Date.now();
  private readonly watchdog: NodeJS.Timeout;
  /** Makes the job host's object-store calls, with the worker's credentials, under its tenant's jobs only. */
  private readonly blobBroker: BlobBroker;

  /**
   * `host`: a job host forked for this job, or a warm spare (WarmJobHosts) that has been handed nothing yet, either
   * forked with `limits`: a job host that reaches its heap limit, or stops answering for longer than its stall limit,
   * fails the job with that reason (it is killed in the second case). Its folder is removed once it has exited.
   * `blobs`: the worker's object store, through which the job host's checkpoints, restores and moves go.
   */
  constructor(
    job: JobStart,
    blobs: BlobStore,
    private readonly host: ForkedJobHost = forkJobHost({ limits: DEFAULT_JOB_HOST_LIMITS }),
    private readonly limits: JobHostLimits = DEFAULT_JOB_HOST_LIMITS,
  ) {
    this.cachedBundle = job.bundlePath;
    this.start = { ...job, type: 'start', bundlePath: join(host.dir, 'job.js'), stateDir: join(host.dir, 'state') };
    const child = host.child;
    this.child = child;
    this.blobBroker = new BlobBroker(blobs, job.tenantId, (reply) => this.postAndWait(reply));
    this.child.on('message', (m: FromJobHost) => (isBlobRequest(m) ? this.blobBroker.handle(m) : this.onMessage(m)));
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    this.watchdog = setInterval(() => this.checkAlive(), Math.min(1_000, limits.stallTimeoutMs / 4));
    this.watchdog.unref();
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        clearInterval(this.watchdog);
        if (this.state !== 'FINISHED' && this.state !== 'FAILED' && heapExhausted(this.stderrTail)) {
          // Its own allocations, not a lost machine: restoring it elsewhere would only run out again.
          this.state = 'FAILED';
          this.failure = heapLimitReason(this.limits);
        }
        if (this.state !== 'FINISHED' && this.state !== 'FAILED') {
          // Stopped on purpose (or killed past its stop grace): gone, not failed. Otherwise it died unannounced.
          this.state = this.state === 'STOPPING' ? 'FINISHED' : this.state === 'STARTING' ? 'FAILED' : 'LOST';
          this.failure ??= `job host exited (code ${code}, signal ${signal})`;
        }
        for (const id of [...this.savepoints.keys()]) this.settleSavepoint(id, new JobStartError(`job host exited before savepoint ${id} completed`));
        for (const [id, waiter] of this.moves) waiter.reject(new JobStartError(`job host exited before move ${id} completed`));
        this.moves.clear();
        for (const { reject } of this.splits.values()) reject(new JobStartError(`job ${this.start.jobId} ended before its keys were split`));
        this.splits.clear();
        for (const [id, waiter] of this.rescales) waiter.reject(new JobStartError(`job host exited before rescale ${id} completed`));
        this.rescales.clear();
        this.blobBroker.close();
        removeJobHostDir(this.host);
        resolve();
      }),
    );
  }

  /** Starts the job; resolves once every subtask runs, rejects with the job host's reason otherwise. */
  async run(): Promise<void> {
    try {
      await copyFile(this.cachedBundle, this.start.bundlePath);
    } catch (err) {
      this.kill();
      throw new JobStartError(`job ${this.start.jobId}: its bundle could not be handed to its job host: ${(err as Error).message}`);
    }
    this.post(this.start);
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (this.state === 'STARTING') {
      if (Date.now() > deadline) {
        this.kill();
        throw new JobStartError(`job ${this.start.jobId} did not start within ${START_TIMEOUT_MS / 1000} s`);
      }
      await Promise.race([this.exited, new Promise((r) => setTimeout(r, 20))]);
    }
    if (this.state === 'FAILED') throw new JobStartError(`job ${this.start.jobId} failed to start: ${this.failure}`);
  }

  /** Asks the job to stop, and kills it if it has not within the grace period. */
  async stop(): Promise<void> {
    if (this.state === 'FINISHED' || this.state === 'FAILED' || this.state === 'LOST') return;
    this.state = 'STOPPING';
    this.post({ type: 'stop' });
    const timer = setTimeout(() => this.kill(), STOP_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
  }

  /** Takes a savepoint; resolves with its manifest key. A retried id returns the existing savepoint. */
  savepoint(savepointId: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      this.savepoints.set(savepointId, { resolve, reject });
      this.post({ type: 'savepoint', savepointId });
    });
  }

  /** Moves key groups live (process 0 of a run leads it for every process); resolves with what moved. */
  moveKeyGroups(move: Omit<MoveMessage, 'type'>): Promise<MoveReport> {
    if (this.state !== 'RUNNING') return Promise.reject(new JobStartError(`job ${this.start.jobId} is ${this.state}, not running`));
    return new Promise<MoveReport>((resolve, reject) => {
      this.moves.set(move.moveId, { resolve, reject });
      this.post({ type: 'move', ...move });
    });
  }

  /** Sets a splittable window's split keys (process 0 of a run hands them to every process); resolves once applied here. */
  splitKeys(split: Omit<SplitKeysMessage, 'type'>): Promise<void> {
    if (this.state !== 'RUNNING') return Promise.reject(new JobStartError(`job ${this.start.jobId} is ${this.state}, not running`));
    return new Promise<void>((resolve, reject) => {
      this.splits.set(split.splitId, { resolve, reject });
      this.post({ type: 'split-keys', ...split });
    });
  }

  /**
   * Rescales the run live (process 0 leads it for every process); resolves with the report. A refusal rejects with
   * RescaleRefused (nothing changed).
   */
  rescale(rescale: Omit<RescaleMessage, 'type'>, progress: (p: RescaleProgress) => void): Promise<RescaleReport> {
    if (this.state !== 'RUNNING') return Promise.reject(new JobStartError(`job ${this.start.jobId} is ${this.state}, not running`));
    return new Promise<RescaleReport>((resolve, reject) => {
      this.rescales.set(rescale.rescaleId, { resolve, reject, progress });
      this.post({ type: 'rescale', ...rescale });
    });
  }

  /** Takes the savepoint, then stops; a savepoint that fails leaves the job running and rejects. */
  async stopWithSavepoint(savepointId: string): Promise<string> {
    const taken = this.savepointKeys.get(savepointId);
    if (taken) {
      // Already taken, and this process stopped with it (a run over several processes stops together).
      await this.stop();
      return taken;
    }
    if (this.state !== 'RUNNING') throw new JobStartError(`job ${this.start.jobId} is ${this.state}, not running`);
    const pending = new Promise<string>((resolve, reject) => this.savepoints.set(savepointId, { resolve, reject }));
    this.state = 'STOPPING';
    this.post({ type: 'stop', savepointId });
    try {
      const key = await pending;
      const timer = setTimeout(() => this.kill(), STOP_GRACE_MS);
      await this.exited;
      clearTimeout(timer);
      return key;
    } catch (err) {
      if (this.state === 'STOPPING') this.state = 'RUNNING';
      throw err;
    }
  }

  /** The snapshots taken since the last call, oldest first. */
  drainMetrics(): SubtaskMetricsSnapshot[] {
    const out = this.unsentMetrics;
    this.unsentMetrics = [];
    return out;
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }

  /** A job host that has gone silent past its stall limit is blocked in the job's code: failed, and killed. */
  private checkAlive(): void {
    const now = Date.now();
    const sinceCheck = now - this.checkedAt;
    this.checkedAt = now;
    // This process was itself blocked: the job host's messages may be waiting unread, so its silence proves nothing.
    if (sinceCheck > this.limits.stallTimeoutMs / 2) return;
    if (this.aliveAt === undefined || this.state === 'FINISHED' || this.state === 'FAILED' || this.state === 'LOST') return;
    const silentMs = now - this.aliveAt;
    if (silentMs <= this.limits.stallTimeoutMs) return;
    this.state = 'FAILED';
    this.failure = stallReason(this.limits, silentMs);
    this.kill();
  }

  private post(message: ToJobHost): void {
    if (this.child.connected) this.child.send(message);
  }

  /** Resolves once the message is handed to the channel (a body's chunks are sent one after the other). */
  private postAndWait(message: ToJobHost): Promise<void> {
    if (!this.child.connected) return Promise.resolve();
    return new Promise((resolve) => this.child.send(message, () => resolve()));
  }

  private settleSavepoint(savepointId: string, error: Error | null, key = ''): void {
    const waiter = this.savepoints.get(savepointId);
    this.savepoints.delete(savepointId);
    if (error) waiter?.reject(error);
    else waiter?.resolve(key);
  }

  private onMessage(message: FromJobHost): void {
    // Any message shows the event loop turning; `alive` is the one it sends when it has nothing else to say.
    this.aliveAt = Date.now();
    switch (message.type) {
      case 'alive':
        break;
      case 'started':
        this.subtasks = message.subtasks;
        if (this.state === 'STARTING') this.state = 'RUNNING';
        break;
      case 'metrics':
        this.latestMetrics = message.snapshots;
        this.unsentMetrics.push(...message.snapshots);
        // Bounded while no heartbeat drains them (Redis away): the oldest intervals go first.
        if (this.unsentMetrics.length > MAX_UNSENT_METRICS) this.unsentMetrics.splice(0, this.unsentMetrics.length - MAX_UNSENT_METRICS);
        break;
      case 'restored':
        this.restored = message;
        break;
      case 'checkpoint':
        if (message.savepointId) {
          this.savepointKeys.set(message.savepointId, message.manifestKey);
          this.settleSavepoint(message.savepointId, null, message.manifestKey);
        }
        else this.latestCheckpoint = { checkpointId: message.checkpointId, manifestKey: message.manifestKey, durationMs: message.durationMs };
        break;
      case 'savepoint-failed':
        this.settleSavepoint(message.savepointId, new JobStartError(`savepoint ${message.savepointId} failed: ${message.message}`));
        break;
      case 'checkpoint-failed':
        this.lastCheckpointFailure = { checkpointId: message.checkpointId, message: message.message };
        break;
      case 'moved':
        this.moves.get(message.report.moveId)?.resolve(message.report);
        this.moves.delete(message.report.moveId);
        break;
      case 'keys-split':
        this.splits.get(message.splitId)?.resolve();
        this.splits.delete(message.splitId);
        break;
      case 'split-failed':
        this.splits.get(message.splitId)?.reject(new KeySplitRefusedError(message.message));
        this.splits.delete(message.splitId);
        break;
      case 'move-failed':
        this.moves.get(message.moveId)?.reject(new JobStartError(`move ${message.moveId} failed: ${message.message}`));
        this.moves.delete(message.moveId);
        break;
      case 'rescale-progress':
        this.rescales.get(message.rescaleId)?.progress({ moved: message.moved, total: message.total });
        break;
      case 'rescaled':
        this.rescales.get(message.report.rescaleId)?.resolve(message.report);
        this.rescales.delete(message.report.rescaleId);
        break;
      case 'rescale-failed':
        this.rescales.get(message.rescaleId)?.reject(new RescaleFailedError(`rescale ${message.rescaleId} ${message.refused ? 'refused' : 'failed'}: ${message.message}`, message.refused));
        this.rescales.delete(message.rescaleId);
        break;
      case 'finished':
        this.state = 'FINISHED';
        break;
      case 'failed':
        this.state = 'FAILED';
        this.failure = message.message;
        break;
    }
  }
}

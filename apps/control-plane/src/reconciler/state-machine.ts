import type { Deployment, DeploymentRun, DeploymentStatus, LiveRescale, Parallelism, RunOutcome } from '../deployments/deployment';
import type { RunRefusal } from '../placement/command-gateway';
import type { JobObservation } from './job-observation';

/**
 * What one state handler decides: move to another status (stored with its reason, published), or stay and look
 * again later (optionally updating the status reason, e.g. "waiting for a worker with 2 free slots").
 */
export type Next =
  | { readonly kind: 'transition'; readonly to: DeploymentStatus; readonly reason: string }
  | { readonly kind: 'stay'; readonly note?: string; readonly again?: boolean; readonly soon?: boolean };

/** Stay; `again`: look once more right away (the next step has work to do, in a transaction of its own). */
export const stay = (note?: string, again?: boolean): Next => (again ? { kind: 'stay', note, again } : { kind: 'stay', note });
/** Stay in a resting status, but look again as soon as an active one would (waiting for a worker, not the tenant). */
export const staySoon = (note: string): Next => ({ kind: 'stay', note, soon: true });
export const goTo = (to: DeploymentStatus, reason: string): Next => ({ kind: 'transition', to, reason });

export type PlaceResult =
  | { readonly placed: true; readonly run: DeploymentRun }
  | { readonly placed: false; readonly reason: string };

/**
 * What one step of a live rescale came to: stay (`again`: its next step has work to do at once, in a transaction of
 * its own), the job RUNNING again (the rescale DONE, or given up with the job running as it was), or a restart (the
 * rescale FELL_BACK: stop and restore at the new parallelism, as a rescale by restart does).
 */
export type LiveRescaleStep =
  | { readonly kind: 'stay'; readonly note: string; readonly again?: boolean }
  | { readonly kind: 'running'; readonly reason: string }
  | { readonly kind: 'restart'; readonly reason: string };

/**
 * The side effects a state may cause, all within the reconciler's transaction on the deployment's row (commands
 * go out before commit; their deterministic idempotency keys make a resend after a crash harmless).
 */
export interface ReconcileActions {
  /**
   * Spreads the run's processes over live workers with free slots and records run `runNo + 1` with that layout, for
   * the given bundle and parallelism (all processes or none: not placed, with the shortage as the reason).
   * A restore pending on the deployment wins over `restoreFrom` (a requested one always; a kept one unless
   * `keptState` is false) and is taken by this placement.
   */
  placeRun(options: {
    readonly bundleId: string;
    readonly parallelism: Parallelism;
    readonly reason: string;
    /** Where the run's state comes from (a checkpoint or savepoint); absent: it starts without state. */
    readonly restoreFrom?: DeploymentRun['restoreFrom'];
    /** False: drop the state kept when the deployment stopped (a stateless upgrade). */
    readonly keptState?: boolean;
  }): Promise<PlaceResult>;
  /** Sends run-subtasks to each process of the run, once (records dispatched_at). */
  dispatchRun(run: DeploymentRun): Promise<void>;
  /**
   * Sends stop-subtasks to every process of the run, once (records stop_sent_at). With `savepointId`: stop with that
   * savepoint (process 0 takes it, the others wait for it), falling back to a plain stop when it cannot be taken.
   */
  stopRun(run: DeploymentRun, reason: string, savepointId?: string): Promise<void>;
  markRunning(run: DeploymentRun): Promise<void>;
  endRun(run: DeploymentRun, outcome: RunOutcome, reason: string): Promise<void>;
  /** A worker's reason for refusing a process's run command for good, if one did (the lowest process first). */
  runFailure(run: DeploymentRun): Promise<RunRefusal | null>;
  /** Makes the pending upgrade's bundle the deployment's bundle. */
  adoptPendingUpgrade(): Promise<void>;
  /** Makes the pending parallelism the deployment's parallelism. */
  adoptPendingParallelism(): Promise<void>;
  /**
   * RUNNING with a pending parallelism: records a live rescale of the run where the requested mode and the run allow
   * one (docs/deployments.md, "Rescaling"), and says how the change will be made, for the move to RESCALING.
   */
  beginRescale(run: DeploymentRun): Promise<string>;
  /** One step of the live rescale in flight for `run` (live-rescale-driver.ts). */
  stepLiveRescale(rescale: LiveRescale, run: DeploymentRun, now: Date): Promise<LiveRescaleStep>;
  /** Gives the live rescale in flight up (FAILED), saying why. */
  abandonRescale(rescale: LiveRescale, reason: string): Promise<void>;
  /**
   * Keeps the stopped job's state for its next run: the first of `savepointIds` found on S3, else the job's latest
   * checkpoint (the reason says why no savepoint). Never replaces a restore the tenant requested. Returns what was
   * kept, in words, for the transition's reason.
   */
  keepState(run: DeploymentRun | null, savepointIds: readonly string[], whyNoSavepoint?: string): Promise<string>;
  /** The savepoint's manifest key when it is on S3 (complete), else null. */
  savepointTaken(savepointId: string): Promise<string | null>;
  /** Why the worker refused the tenant's take-savepoint command for this run, if it did. */
  savepointRefused(run: DeploymentRun, savepointId: string): Promise<string | null>;
  /** True only when the run's worker queue answered that it holds no take-savepoint command with this id. */
  savepointCommandMissing(run: DeploymentRun, savepointId: string): Promise<boolean>;
  /** The tenant's stop-with-savepoint completed: the desired state becomes SUSPENDED. */
  suspendAfterStop(): Promise<void>;
  /** Forgets a stop-with-savepoint in flight (its savepoint failed, or its command was lost). */
  clearPendingStop(savepointId: string): Promise<void>;
}

/** Everything a state handler sees: the deployment, its latest run, what its processes' workers report, and the clock. */
export interface ReconcileContext {
  readonly deployment: Deployment;
  /** The latest run (ended or not); null before the first start. */
  readonly run: DeploymentRun | null;
  readonly job: JobObservation;
  readonly now: Date;
  /** How long a dispatched run may take to be reported running before it counts as failed. */
  readonly startTimeoutMs: number;
  readonly actions: ReconcileActions;
}

/** One file per status, each answering "given what is observed, where next?". */
export type StateHandler = (ctx: ReconcileContext) => Promise<Next>;

export const openRun = (ctx: ReconcileContext): DeploymentRun | null => (ctx.run && !ctx.run.endedAt ? ctx.run : null);

export { suspendSavepointId, upgradeSavepointId } from './lifecycle-savepoints';

/** A run's start, in words: which snapshot it restored, or none. */
export function describeRestore(restore: DeploymentRun['restoreFrom']): string {
  if (!restore) return 'started without state';
  if (restore.snapshotId === 'latest') return "restored the job's latest usable checkpoint";
  return `restored savepoint ${restore.snapshotId}`;
}

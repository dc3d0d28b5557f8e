import type { Deployment, DeploymentRun, DeploymentStatus, Parallelism, RunOutcome } from '../deployments/deployment';
import type { JobObservation } from './job-observation';

/**
 * What one state handler decides: move to another status (stored with its reason, published), or stay and look
 * again later (optionally updating the status reason, e.g. "waiting for a worker with 2 free slots").
 */
export type Next =
  | { readonly kind: 'transition'; readonly to: DeploymentStatus; readonly reason: string }
  | { readonly kind: 'stay'; readonly note?: string; readonly again?: boolean };

/** Stay; `again`: look once more right away (the next step has work to do, in a transaction of its own). */
export const stay = (note?: string, again?: boolean): Next => (again ? { kind: 'stay', note, again } : { kind: 'stay', note });
export const goTo = (to: DeploymentStatus, reason: string): Next => ({ kind: 'transition', to, reason });

export type PlaceResult =
  | { readonly placed: true; readonly run: DeploymentRun }
  | { readonly placed: false; readonly reason: string };

/**
 * The side effects a state may cause, all within the reconciler's transaction on the deployment's row (commands
 * go out before commit; their deterministic idempotency keys make a resend after a crash harmless).
 */
export interface ReconcileActions {
  /** Chooses a worker and records run `runNo + 1` for the deployment's current (or pending) bundle and parallelism. */
  placeRun(options: {
    readonly bundleId: string;
    readonly parallelism: Parallelism;
    readonly reason: string;
    /** Where the run's state comes from (a checkpoint or savepoint); absent: it starts without state. */
    readonly restoreFrom?: DeploymentRun['restoreFrom'];
  }): Promise<PlaceResult>;
  /** Sends run-subtasks for the run, once (records dispatched_at). */
  dispatchRun(run: DeploymentRun): Promise<void>;
  /** Sends stop-subtasks for the run, once (records stop_sent_at). */
  stopRun(run: DeploymentRun, reason: string): Promise<void>;
  markRunning(run: DeploymentRun): Promise<void>;
  endRun(run: DeploymentRun, outcome: RunOutcome, reason: string): Promise<void>;
  /** The worker's reason for refusing the run command for good, if it did. */
  runFailure(run: DeploymentRun): Promise<string | null>;
  /** Makes the pending upgrade's bundle the deployment's bundle. */
  adoptPendingUpgrade(): Promise<void>;
  /** Makes the pending parallelism the deployment's parallelism. */
  adoptPendingParallelism(): Promise<void>;
}

/** Everything a state handler sees: the deployment, its latest run, that run's worker as last heard, and the clock. */
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

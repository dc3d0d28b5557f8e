import type { RescaleReport } from '@weir/protocol';

/** What a tenant asks a deployment to be. */
export const DESIRED_STATES = ['RUNNING', 'SUSPENDED', 'CANCELLED'] as const;
export type DesiredState = (typeof DESIRED_STATES)[number];

/**
 * What the reconciler observes. CREATED → STARTING → RUNNING ⇄ RESCALING / RECOVERING / UPGRADING, and
 * STOPPING on the way to SUSPENDED or CANCELLED; FAILED and FINISHED when the job itself ends.
 */
export const DEPLOYMENT_STATUSES = [
  'CREATED',
  'STARTING',
  'RUNNING',
  'RESCALING',
  'RECOVERING',
  'UPGRADING',
  'STOPPING',
  'SUSPENDED',
  'FAILED',
  'FINISHED',
  'CANCELLED',
] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

export const UPGRADE_MODES = ['stateless', 'savepoint', 'last-state'] as const;
export type UpgradeMode = (typeof UPGRADE_MODES)[number];

/**
 * How a parallelism change is made: `live` moves key groups to joining processes (or off retiring ones) while the job
 * runs, and restarts where the run cannot be changed live; `restart` stops the job and restores it at the new
 * parallelism from its latest checkpoint.
 */
export const RESCALE_MODES = ['live', 'restart'] as const;
export type RescaleMode = (typeof RESCALE_MODES)[number];

/**
 * A live rescale's states (deployment_rescales): PENDING while its joiners are placed, JOINING once they are recorded
 * in the run's layout (their commands to send), MOVING while process 0 moves key groups, then DONE, FAILED (given up;
 * the reason says whether the job runs on as it was or was lost) or FELL_BACK (not possible live: restarted instead).
 */
export const RESCALE_STATES = ['PENDING', 'JOINING', 'MOVING', 'DONE', 'FAILED', 'FELL_BACK'] as const;
export type RescaleState = (typeof RESCALE_STATES)[number];
export const RESCALE_IN_FLIGHT: readonly RescaleState[] = ['PENDING', 'JOINING', 'MOVING'];

/** A live rescale of one run, as recorded; its RescaleReport once DONE. */
export interface LiveRescale {
  readonly rescaleId: string;
  readonly runNo: number;
  readonly fromParallelism: Parallelism;
  readonly toParallelism: Parallelism;
  readonly fromProcesses: number;
  readonly toProcesses: number;
  readonly state: RescaleState;
  /** What it does or waits for; once settled, why it ended so. */
  readonly reason: string;
  /** Key groups moved of those to move (process 0's progress, then its report). */
  readonly moved: number;
  readonly total: number;
  readonly report: RescaleReport | null;
  readonly requestedAt: Date;
  readonly joinedAt: Date | null;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
}

/**
 * What the dynamic partitioner may do with a deployment (docs/partitioner.md): `off` never looks at it; `recommend`
 * (the default) records and pushes its decisions and changes nothing; `auto` also makes each decision's key-group
 * moves live. Recommend by default: watching costs the job nothing, while a move pauses the key groups it moves, so
 * a tenant who has seen what the partitioner would do opts in to it doing so.
 */
export const PARTITIONER_MODES = ['off', 'recommend', 'auto'] as const;
export type PartitionerMode = (typeof PARTITIONER_MODES)[number];
export const DEFAULT_PARTITIONER_MODE: PartitionerMode = 'recommend';

/**
 * What the autoscaler may do with a deployment (docs/partitioner.md, "Autoscaler"): `off` never looks at it;
 * `recommend` (the default) records and pushes its decisions and changes nothing; `auto` also asks for each SCALE_UP
 * or SCALE_DOWN as a live rescale. Recommend by default for the partitioner's reasons and one more: a rescale moves
 * key groups (their pauses) and takes slots of the fleet and of the tenant's quota, so a tenant who has seen what the
 * autoscaler would do, and at what cost, opts in to it doing so.
 */
export const AUTOSCALER_MODES = ['off', 'recommend', 'auto'] as const;
export type AutoscalerMode = (typeof AUTOSCALER_MODES)[number];
export const DEFAULT_AUTOSCALER_MODE: AutoscalerMode = 'recommend';

/** How a resume (desired state RUNNING again) treats the state kept when the deployment stopped. */
export const RESUME_MODES = ['last-state', 'stateless'] as const;
export type ResumeMode = (typeof RESUME_MODES)[number];

/** Per-operator parallelism; operators not named run at `default`. */
export interface Parallelism {
  readonly default: number;
  readonly operators: Readonly<Record<string, number>>;
}

export interface PendingUpgrade {
  readonly bundleId: string;
  readonly mode: UpgradeMode;
  readonly requestedAt: string;
}

/**
 * What the next run starts from: a savepoint the tenant asked to restore (`requested`), or the state the reconciler
 * kept when the deployment stopped (`kept`: the savepoint taken at suspend, or `snapshotId: "latest"`, the job's
 * newest usable checkpoint, when that savepoint could not be taken). `reason` says which, in words.
 */
export interface PendingRestore {
  readonly snapshotId: string;
  readonly location: string;
  readonly origin: 'requested' | 'kept';
  readonly reason: string;
  readonly allowNonRestoredState: boolean;
}

/** A tenant's stop-with-savepoint in flight: the desired state becomes SUSPENDED once the savepoint is on S3. */
export interface PendingStop {
  readonly savepointId: string;
  readonly runNo: number;
  readonly requestedAt: string;
}

/** Input and output topics by logical name (the job's own names), each under `t.<tenantId>.`. */
export interface DeploymentConfig {
  readonly topics?: Readonly<Record<string, string>>;
  readonly properties?: Readonly<Record<string, string>>;
}

export interface Deployment {
  readonly tenantId: string;
  readonly id: string;
  readonly name: string;
  readonly bundleId: string;
  readonly parallelism: Parallelism;
  readonly config: DeploymentConfig;
  readonly desiredState: DesiredState;
  readonly status: DeploymentStatus;
  readonly statusReason: string;
  readonly pendingUpgrade: PendingUpgrade | null;
  readonly pendingParallelism: Parallelism | null;
  /** How the pending parallelism change is to be made; null when none is pending. */
  readonly pendingRescaleMode: RescaleMode | null;
  readonly pendingRestore: PendingRestore | null;
  readonly pendingStop: PendingStop | null;
  readonly partitionerMode: PartitionerMode;
  readonly autoscalerMode: AutoscalerMode;
  readonly runNo: number;
  /** Where the open run runs: its processes, their workers and subtasks; null while no run is open. */
  readonly layout: RunLayout | null;
  /** The latest live rescale (in flight or settled); null when there was none. */
  readonly rescale: LiveRescale | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly statusChangedAt: Date;
}

/** The layout of one run: which process runs which subtasks on which worker. */
export interface RunLayout {
  readonly runNo: number;
  readonly processes: readonly RunProcessLayout[];
}

export const RUN_OUTCOMES = ['STOPPED', 'FAILED', 'FINISHED', 'LOST', 'REPLACED'] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];

export interface SubtaskAssignment {
  readonly operatorId: string;
  readonly subtask: number;
  readonly keyGroups: readonly (readonly [number, number])[];
}

/**
 * One job host process of a run: the worker hosting it and the subtasks it runs (subtask `index` of every operator
 * whose parallelism exceeds `index`). Each process holds one slot on its worker.
 */
export interface RunProcessLayout {
  readonly index: number;
  readonly workerId: string;
  readonly subtasks: readonly SubtaskAssignment[];
  /**
   * The live rescale this process joined its run by, and when it was placed (ISO): its commands carry the rescale in
   * their keys (an index a retiree had before may be reused in the same run), and its worker is judged from then on.
   * Absent for the processes the run was placed with.
   */
  readonly joinedBy?: string;
  readonly joinedAt?: string;
}

/**
 * Per operator, the subtask owning each key group (index = key group): contiguous ranges at first, changed by live
 * key-group moves, inherited by the next run while the operator's parallelism and the key-group count stay.
 */
export type Routing = Readonly<Record<string, readonly number[]>>;

/** One start of a deployment, in one or several job host processes on one or several workers. */
export interface DeploymentRun {
  readonly deploymentId: string;
  readonly runNo: number;
  /** Process 0's worker: it leads the run's checkpoints and takes its savepoints. */
  readonly workerId: string;
  readonly bundleId: string;
  /** Every subtask of the run, across its processes. */
  readonly subtasks: readonly SubtaskAssignment[];
  /** The process count: each process holds one slot on its worker. */
  readonly slots: number;
  /** The layout, in index order (at least one process); its key groups follow `routing`. */
  readonly processes: readonly RunProcessLayout[];
  /** The routing the run started with, updated by each move DONE; null for runs placed before routings were recorded. */
  readonly routing: Routing | null;
  readonly restoreFrom: { readonly snapshotId: string; readonly location: string; readonly allowNonRestoredState?: boolean } | null;
  readonly startedReason: string;
  readonly placedAt: Date;
  readonly dispatchedAt: Date | null;
  readonly runningAt: Date | null;
  readonly stopSentAt: Date | null;
  readonly endedAt: Date | null;
  readonly outcome: RunOutcome | null;
  readonly endReason: string | null;
}

export interface DeploymentTransition {
  readonly id: string;
  readonly deploymentId: string;
  readonly from: DeploymentStatus | null;
  readonly to: DeploymentStatus;
  readonly reason: string;
  readonly runNo: number | null;
  readonly at: Date;
}

/** Statuses the reconciler never leaves on its own (only a change of desired state or an upgrade moves them). */
export const RESTING_STATUSES: readonly DeploymentStatus[] = ['SUSPENDED', 'FAILED', 'FINISHED', 'CANCELLED'];

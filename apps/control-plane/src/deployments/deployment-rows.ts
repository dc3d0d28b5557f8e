import type { Deployment, DeploymentRun, DeploymentTransition, LiveRescale } from './deployment';

/** A deployment_rescales row (alias s) as JSON: what the deployment shows of its latest live rescale. */
export const RESCALE_JSON = `json_build_object('rescaleId', s.rescale_id, 'runNo', s.run_no, 'fromParallelism', s.from_parallelism,
     'toParallelism', s.to_parallelism, 'fromProcesses', s.from_processes, 'toProcesses', s.to_processes, 'state', s.state,
     'reason', s.reason, 'moved', s.moved, 'total', s.total, 'report', s.report, 'requestedAt', s.requested_at,
     'joinedAt', s.joined_at, 'startedAt', s.started_at, 'finishedAt', s.finished_at)`;

/** Column lists and row → model mapping shared by the API's and the reconciler's SQL. */
export const DEPLOYMENT_COLUMNS = `tenant_id, id, name, bundle_id, parallelism, config, desired_state, status, status_reason,
  pending_upgrade, pending_parallelism, pending_rescale_mode, pending_stop, partitioner_mode, autoscaler_mode, run_no, created_at, updated_at, status_changed_at,
  (SELECT json_build_object('snapshotId', r.snapshot_id, 'location', r.location, 'origin', r.origin, 'reason', r.reason,
     'allowNonRestoredState', r.allow_non_restored_state)
   FROM deployment_restores r WHERE r.deployment_id = deployments.id) AS pending_restore,
  (SELECT json_build_object('runNo', r.run_no, 'workerId', r.worker_id, 'subtasks', r.subtasks, 'processes', r.processes)
   FROM deployment_runs r WHERE r.deployment_id = deployments.id AND r.run_no = deployments.run_no AND r.ended_at IS NULL) AS open_run,
  (SELECT ${RESCALE_JSON} FROM deployment_rescales s WHERE s.deployment_id = deployments.id ORDER BY s.rescale_id DESC LIMIT 1) AS rescale`;

export const RUN_COLUMNS = `deployment_id, run_no, worker_id, bundle_id, subtasks, slots, processes, routing, restore_from, started_reason, placed_at,
  dispatched_at, running_at, stop_sent_at, ended_at, outcome, end_reason`;

export const TRANSITION_COLUMNS = 'id, deployment_id, from_status, to_status, reason, run_no, at';

export interface DeploymentRow {
  tenant_id: string;
  id: string;
  name: string;
  bundle_id: string;
  parallelism: Deployment['parallelism'];
  config: Deployment['config'];
  desired_state: Deployment['desiredState'];
  status: Deployment['status'];
  status_reason: string;
  pending_upgrade: Deployment['pendingUpgrade'];
  pending_parallelism: Deployment['pendingParallelism'];
  pending_rescale_mode: Deployment['pendingRescaleMode'];
  pending_stop: Deployment['pendingStop'];
  pending_restore: Deployment['pendingRestore'];
  partitioner_mode: Deployment['partitionerMode'];
  autoscaler_mode: Deployment['autoscalerMode'];
  /** The open run's layout columns (processes '[]' for a run placed before layouts were recorded); null when none is open. */
  open_run: { runNo: number; workerId: string; subtasks: DeploymentRun['subtasks']; processes: DeploymentRun['processes'] } | null;
  /** The latest live rescale, its timestamps as JSON strings; null when none. */
  rescale: RescaleJson | null;
  run_no: number;
  created_at: Date;
  updated_at: Date;
  status_changed_at: Date;
}

export function toDeployment(r: DeploymentRow): Deployment {
  return {
    tenantId: r.tenant_id,
    id: r.id,
    name: r.name,
    bundleId: r.bundle_id,
    parallelism: r.parallelism,
    config: r.config,
    desiredState: r.desired_state,
    status: r.status,
    statusReason: r.status_reason,
    pendingUpgrade: r.pending_upgrade,
    pendingParallelism: r.pending_parallelism,
    pendingRescaleMode: r.pending_parallelism ? (r.pending_rescale_mode ?? 'live') : null,
    pendingRestore: r.pending_restore,
    pendingStop: r.pending_stop,
    partitionerMode: r.partitioner_mode,
    autoscalerMode: r.autoscaler_mode,
    runNo: r.run_no,
    layout: r.open_run ? { runNo: r.open_run.runNo, processes: processesOf(r.open_run) } : null,
    rescale: r.rescale ? toRescale(r.rescale) : null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    statusChangedAt: r.status_changed_at,
  };
}

type Stamp = 'requestedAt' | 'joinedAt' | 'startedAt' | 'finishedAt';
export type RescaleJson = Omit<LiveRescale, Stamp> & { requestedAt: string } & { [K in Exclude<Stamp, 'requestedAt'>]: string | null };

export function toRescale(r: RescaleJson): LiveRescale {
  const at = (s: string | null) => (s === null ? null : new Date(s));
  return { ...r, requestedAt: new Date(r.requestedAt), joinedAt: at(r.joinedAt), startedAt: at(r.startedAt), finishedAt: at(r.finishedAt) };
}

export interface RunRow {
  deployment_id: string;
  run_no: number;
  worker_id: string;
  bundle_id: string;
  subtasks: DeploymentRun['subtasks'];
  slots: number;
  /** '[]' for runs placed before layouts were recorded (1764870000000_run-processes.sql). */
  processes: DeploymentRun['processes'];
  /** NULL for runs placed before 1764880000000_key-group-moves.sql. */
  routing: DeploymentRun['routing'];
  restore_from: DeploymentRun['restoreFrom'];
  started_reason: string;
  placed_at: Date;
  dispatched_at: Date | null;
  running_at: Date | null;
  stop_sent_at: Date | null;
  ended_at: Date | null;
  outcome: DeploymentRun['outcome'];
  end_reason: string | null;
}

export function toRun(r: RunRow): DeploymentRun {
  return {
    deploymentId: r.deployment_id,
    runNo: r.run_no,
    workerId: r.worker_id,
    bundleId: r.bundle_id,
    subtasks: r.subtasks,
    slots: r.slots,
    processes: processesOf({ workerId: r.worker_id, subtasks: r.subtasks, processes: r.processes }),
    routing: r.routing,
    restoreFrom: r.restore_from,
    startedReason: r.started_reason,
    placedAt: r.placed_at,
    dispatchedAt: r.dispatched_at,
    runningAt: r.running_at,
    stopSentAt: r.stop_sent_at,
    endedAt: r.ended_at,
    outcome: r.outcome,
    endReason: r.end_reason,
  };
}

/** A run placed before layouts were recorded ran the whole job in one process on its worker. */
function processesOf(r: { workerId: string; subtasks: DeploymentRun['subtasks']; processes: DeploymentRun['processes'] }): DeploymentRun['processes'] {
  return r.processes.length > 0 ? r.processes : [{ index: 0, workerId: r.workerId, subtasks: r.subtasks }];
}

export interface TransitionRow {
  id: string;
  deployment_id: string;
  from_status: DeploymentTransition['from'];
  to_status: DeploymentTransition['to'];
  reason: string;
  run_no: number | null;
  at: Date;
}

export function toTransition(r: TransitionRow): DeploymentTransition {
  return { id: r.id, deploymentId: r.deployment_id, from: r.from_status, to: r.to_status, reason: r.reason, runNo: r.run_no, at: r.at };
}

import type { RunningSubtask } from '@weir/protocol';
import type { DeploymentRun } from '../deployments/deployment';
import type { WorkerStatus } from '../workers/worker';

/** The latest run's worker, as the registry last heard it. */
export interface ObservedWorker {
  readonly id: string;
  readonly status: WorkerStatus;
  readonly startedAt: Date;
  readonly runningSubtasks: readonly RunningSubtask[];
}

/**
 * What the fleet says about a deployment's job, from its run's worker's heartbeats:
 * - `worker-gone`: the worker is LOST, STOPPED or unknown (its subtasks are gone or unreachable);
 * - `worker-restarted`: a new incarnation of the worker heartbeats, and the run had been running on the old one;
 * - `absent` / `running` / `failed` / `changing` (some subtasks STARTING or STOPPING): from its reported subtasks.
 */
export type JobObservation =
  | { readonly kind: 'no-run' }
  | { readonly kind: 'worker-gone'; readonly workerId: string; readonly workerStatus: WorkerStatus | 'UNKNOWN' }
  | { readonly kind: 'worker-restarted'; readonly workerId: string }
  | { readonly kind: 'absent' | 'running' | 'failed' | 'changing'; readonly workerId: string; readonly subtasks: number };

export function observeJob(tenantId: string, deploymentId: string, run: DeploymentRun | null, worker: ObservedWorker | null): JobObservation {
  if (!run) return { kind: 'no-run' };
  if (!worker || worker.status !== 'ALIVE') {
    return { kind: 'worker-gone', workerId: run.workerId, workerStatus: worker?.status ?? 'UNKNOWN' };
  }
  const mine = worker.runningSubtasks.filter((s) => s.tenantId === tenantId && s.jobId === deploymentId);
  if (mine.length === 0 && run.runningAt && worker.startedAt > run.runningAt) return { kind: 'worker-restarted', workerId: worker.id };
  const base = { workerId: worker.id, subtasks: mine.length };
  if (mine.length === 0) return { kind: 'absent', ...base };
  if (mine.some((s) => s.state === 'FAILED')) return { kind: 'failed', ...base };
  if (mine.every((s) => s.state === 'RUNNING')) return { kind: 'running', ...base };
  return { kind: 'changing', ...base };
}

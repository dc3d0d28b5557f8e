import type { RunningSubtask } from '@weir/protocol';
import type { DeploymentRun } from '../deployments/deployment';
import type { WorkerStatus } from '../workers/worker';

/** A worker of the latest run, as the registry last heard it. */
export interface ObservedWorker {
  readonly id: string;
  readonly status: WorkerStatus;
  readonly startedAt: Date;
  readonly runningSubtasks: readonly RunningSubtask[];
}

/** One process of a run, named as reasons name it. */
export interface ProcessRef {
  readonly process: number;
  readonly workerId: string;
}

/** Why a process of the run is gone: its worker is not alive, came back without it, or its job host died unreported. */
export type GoneCause =
  | { readonly kind: 'worker-not-alive'; readonly workerStatus: Exclude<WorkerStatus, 'ALIVE'> | 'UNKNOWN' }
  | { readonly kind: 'worker-restarted' }
  | { readonly kind: 'job-host-lost' };

/**
 * What the fleet says about a deployment's latest run, from the heartbeats of its processes' workers:
 * - `failed`: a process reports a subtask FAILED (the job failed on its own and said so);
 * - `process-gone`: a process is gone (its worker LOST, STOPPED or unknown; restarted without it after the run ran;
 *   or its job host LOST, killed without a word): the whole run is lost, since its other processes cannot complete
 *   a checkpoint without it;
 * - `running`: every process reports its subtasks, all RUNNING; `absent`: no process reports anything (the
 *   job ended on its own, or was stopped); `changing`: anything in between (starting, stopping, a partial report).
 * `reporting` lists the processes whose live worker still reports some of their subtasks (not LOST): what must
 * stop before another run of the job is placed. Only live workers' reports are read.
 */
export type JobObservation =
  | { readonly kind: 'no-run' }
  | ({ readonly kind: 'failed'; readonly subtasks: number; readonly reporting: readonly ProcessRef[]; readonly failure?: string } & ProcessRef)
  | ({ readonly kind: 'process-gone'; readonly cause: GoneCause; readonly reporting: readonly ProcessRef[] } & ProcessRef)
  | {
      readonly kind: 'absent' | 'running' | 'changing';
      readonly subtasks: number;
      readonly reporting: readonly ProcessRef[];
      /** Processes not (yet) reporting their subtasks, all RUNNING. */
      readonly notRunning: readonly ProcessRef[];
    };

export function observeJob(tenantId: string, deploymentId: string, run: DeploymentRun | null, workers: ReadonlyMap<string, ObservedWorker>): JobObservation {
  if (!run) return { kind: 'no-run' };
  const views = run.processes.map((p) => {
    const worker = workers.get(p.workerId);
    const reported = worker?.status === 'ALIVE'
      ? worker.runningSubtasks.filter((s) => s.tenantId === tenantId && s.jobId === deploymentId && (s.process ?? 0) === p.index)
      : [];
    return { ref: { process: p.index, workerId: p.workerId }, worker, reported, ranSince: ranSince(run, p) };
  });
  const reporting = views.filter((v) => v.reported.some((s) => s.state !== 'LOST')).map((v) => v.ref);
  const subtasks = views.reduce((n, v) => n + v.reported.length, 0);

  const failed = views.find((v) => v.reported.some((s) => s.state === 'FAILED'));
  if (failed) {
    const failure = failed.reported.find((s) => s.state === 'FAILED' && s.failure)?.failure;
    return { kind: 'failed', ...failed.ref, subtasks, reporting, ...(failure ? { failure } : {}) };
  }
  const gone = (ref: ProcessRef, cause: GoneCause): JobObservation => ({ kind: 'process-gone', ...ref, cause, reporting });
  for (const { ref, worker } of views) {
    if (!worker) return gone(ref, { kind: 'worker-not-alive', workerStatus: 'UNKNOWN' });
    if (worker.status !== 'ALIVE') return gone(ref, { kind: 'worker-not-alive', workerStatus: worker.status });
  }
  for (const { ref, worker, reported, ranSince } of views) {
    // Reporting none of the process after it ran, from an incarnation that started since: the process died with the old one.
    if (reported.length === 0 && ranSince && worker && worker.startedAt > ranSince) return gone(ref, { kind: 'worker-restarted' });
  }
  const lost = views.find((v) => v.reported.some((s) => s.state === 'LOST'));
  if (lost) return gone(lost.ref, { kind: 'job-host-lost' });

  const notRunning = views.filter((v) => !runsAll(v.reported)).map((v) => v.ref);
  if (subtasks === 0) return { kind: 'absent', subtasks, reporting, notRunning };
  return { kind: notRunning.length === 0 ? 'running' : 'changing', subtasks, reporting, notRunning };
}

/**
 * Since when a process is known to have been sent its run: the run's running time, or for a process that joined by
 * a live rescale the later time it was placed. A joiner's worker may well have started after the run ran (a worker
 * added to make room for it) and reports nothing of it until it starts: that is not a restart that lost it.
 */
function ranSince(run: DeploymentRun, process: DeploymentRun['processes'][number]): Date | null {
  if (!run.runningAt) return null;
  const joined = process.joinedAt ? new Date(process.joinedAt) : null;
  return joined && joined > run.runningAt ? joined : run.runningAt;
}

/**
 * A process runs when it reports subtasks and every one of them is RUNNING. Not "every planned subtask": the planned
 * subtasks name every operator of the manifest, while a job host reports its stages only (a source or keyed operator
 * with the operators chained behind it, which the manifest lists too).
 */
function runsAll(reported: readonly RunningSubtask[]): boolean {
  return reported.length > 0 && reported.every((s) => s.state === 'RUNNING');
}

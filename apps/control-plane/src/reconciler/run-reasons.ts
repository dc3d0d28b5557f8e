import type { DeploymentRun } from '../deployments/deployment';
import type { JobObservation, ProcessRef } from './job-observation';

/**
 * How reasons name a run's processes and workers. A run in one process reads as it always did ("worker w1"); a run
 * in several names each process it speaks of with its worker ("process 1 on worker w2"), so a reason says exactly
 * where to look.
 */

/** The run's workers: "worker w1", or "workers w1, w2" (in process order, each once). */
export function runWorkers(run: Pick<DeploymentRun, 'processes'>): string {
  const ids = [...new Set(run.processes.map((p) => p.workerId))];
  return ids.length === 1 ? `worker ${ids[0]}` : `workers ${ids.join(', ')}`;
}

/** Some processes of the run: "worker w1" for a run in one process, else "process 1 on worker w2, process 2 on worker w3". */
export function processesOf(run: Pick<DeploymentRun, 'processes'>, refs: readonly ProcessRef[]): string {
  if (run.processes.length === 1 && refs.length === 1) return `worker ${refs[0].workerId}`;
  return refs.map((r) => `process ${r.process} on worker ${r.workerId}`).join(', ');
}

/** Where the run runs: "worker w1", or "3 processes (0, 1 on worker w1; 2 on worker w2)". */
export function runLayout(run: Pick<DeploymentRun, 'processes'>): string {
  if (run.processes.length === 1) return `worker ${run.processes[0].workerId}`;
  const byWorker = new Map<string, number[]>();
  for (const p of run.processes) byWorker.set(p.workerId, [...(byWorker.get(p.workerId) ?? []), p.index]);
  const parts = [...byWorker].map(([workerId, indexes]) => `${indexes.join(', ')} on worker ${workerId}`);
  return `${run.processes.length} processes (${parts.join('; ')})`;
}

/**
 * What happened to a gone process, for the lost run's end reason: "worker w2 is no longer alive (LOST) while hosting
 * process 1 of run 3", "process 1 of run 3 on worker w2 was lost: its job host died without reporting a failure
 * (killed, or out of memory)".
 */
export function goneReason(job: Extract<JobObservation, { kind: 'process-gone' }>, runNo: number): string {
  const where = `process ${job.process} of run ${runNo}`;
  switch (job.cause.kind) {
    case 'worker-not-alive':
      return `worker ${job.workerId} is no longer alive (${job.cause.workerStatus}) while hosting ${where}`;
    case 'worker-restarted':
      return `worker ${job.workerId} restarted and no longer runs ${where}`;
    case 'job-host-lost':
      return `${where} on worker ${job.workerId} was lost: its job host died without reporting a failure (killed, or out of memory)`;
  }
}

/**
 * The same for the transition of a running deployment into RECOVERING, worker first: "worker w2 is LOST (it hosted
 * process 1 of run 3)", "worker w2 restarted without process 1 of run 3"; a lost job host as in goneReason.
 */
export function goneSummary(job: Extract<JobObservation, { kind: 'process-gone' }>, runNo: number): string {
  switch (job.cause.kind) {
    case 'worker-not-alive':
      return `worker ${job.workerId} is ${job.cause.workerStatus} (it hosted process ${job.process} of run ${runNo})`;
    case 'worker-restarted':
      return `worker ${job.workerId} restarted without process ${job.process} of run ${runNo}`;
    case 'job-host-lost':
      return goneReason(job, runNo);
  }
}

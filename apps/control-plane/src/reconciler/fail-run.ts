import type { DeploymentRun } from '../deployments/deployment';
import { LATEST_CHECKPOINT } from '../savepoints/restore-points';
import { processesOf, runWorkers } from './run-reasons';
import { goTo, type Next, type ReconcileContext } from './state-machine';

/**
 * A run failed (a process reports it FAILED, a worker refused it, or it never reported running): stop every process
 * to free the workers' slots, end it FAILED, and keep its state for a restart, as a stop does: a restart (PATCH
 * RUNNING, or a suspend and resume) then restores the job's latest usable checkpoint, or, for a run that restored a savepoint
 * and never ran, that savepoint again (it is newer than the checkpoints, and its exactly-once output is committed).
 * `PATCH {desiredState: RUNNING, resumeMode: stateless}` drops what was kept.
 */
export async function failRun(ctx: ReconcileContext, run: DeploymentRun, stopReason: string, endReason: string, reason: string): Promise<Next> {
  const { actions } = ctx;
  await actions.stopRun(run, stopReason);
  await actions.endRun(run, 'FAILED', endReason);
  const restored = run.restoreFrom?.snapshotId;
  const retry = restored && restored !== LATEST_CHECKPOINT && !run.runningAt ? [restored] : [];
  const kept = await actions.keepState(run, retry, retry.length > 0 ? `savepoint ${restored} is gone` : undefined);
  return goTo('FAILED', `${reason}; ${kept.replace(/^a resume restores/, 'a restart restores')}`);
}

/** A process of the run reports the job FAILED (it was running, or while it started): which one, on which worker. */
export function failReported(ctx: ReconcileContext, run: DeploymentRun): Promise<Next> {
  const job = ctx.job;
  const who = job.kind === 'failed' ? processesOf(run, [job]) : runWorkers(run);
  const what = `${who} reports the job FAILED`;
  const failure = job.kind === 'failed' ? job.failure : undefined;
  const why = failure ? `${what}: ${failure}` : `${what} (see the worker's log for the error)`;
  return failRun(ctx, run, 'failed: releasing its slots', why, `run ${run.runNo}: ${why}`);
}

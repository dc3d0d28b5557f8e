import type { Deployment } from '../../deployments/deployment';
import { goTo, stay, staySoon, type Next, type StateHandler } from '../state-machine';
import { upgradeReason } from './upgrade-reason';

/**
 * The job failed; it stays failed (no restart loop) until the tenant acts: asks for RUNNING again (a PATCH after
 * the failure), suspends or cancels it, upgrades it, or changes its parallelism. Each of those starts from the state
 * kept as the run failed (its latest usable checkpoint), unless the PATCH said `resumeMode: stateless`.
 */
export const failed: StateHandler = async ({ deployment, job, run }) => {
  if (deployment.desiredState === 'CANCELLED') return goTo('CANCELLED', 'cancelled after a failure');
  if (deployment.desiredState === 'SUSPENDED') return goTo('SUSPENDED', 'suspended after a failure');
  const start = nextStart(deployment);
  if (!start) return stay();
  // Heartbeats carry no run number: while a worker still reports the failed run (it has not applied the stop sent
  // as the run failed), a new run there would be observed FAILED at once. Start the next run once it is dropped
  // (the next placement also waits for the run's other processes to leave their workers).
  if (job.kind === 'failed' && run) return staySoon(`waiting for worker ${job.workerId} to drop failed run ${run.runNo}`);
  return start;
};

function nextStart(deployment: Deployment): Next | null {
  if (deployment.pendingUpgrade) return goTo('UPGRADING', upgradeReason(deployment.pendingUpgrade));
  if (deployment.pendingParallelism) return goTo('RESCALING', 'parallelism change requested after a failure: restarting');
  if (!restartRequested(deployment)) return null;
  // The failed run's state was kept as it failed (fail-run.ts), unless the restart asked for none (stateless).
  const restore = deployment.pendingRestore;
  const from = restore ? `from ${restore.origin === 'requested' ? `the requested restore: ${restore.reason}` : restore.reason}` : 'without state';
  return goTo('STARTING', `desired state RUNNING set again after the failure: restarting ${from}`);
}

/** The API bumps updated_at on every change; the reconciler's own transition stamps updated_at before status_changed_at. */
export function restartRequested(d: Deployment): boolean {
  return d.desiredState === 'RUNNING' && d.updatedAt > d.statusChangedAt;
}

import type { Deployment } from '../../deployments/deployment';
import { goTo, stay, type StateHandler } from '../state-machine';
import { upgradeReason } from './upgrade-reason';

/**
 * The job failed; it stays failed (no restart loop) until the tenant acts: asks for RUNNING again (a PATCH after
 * the failure), suspends or cancels it, upgrades it, or changes its parallelism.
 */
export const failed: StateHandler = async ({ deployment }) => {
  if (deployment.desiredState === 'CANCELLED') return goTo('CANCELLED', 'cancelled after a failure');
  if (deployment.desiredState === 'SUSPENDED') return goTo('SUSPENDED', 'suspended after a failure');
  if (deployment.pendingUpgrade) return goTo('UPGRADING', upgradeReason(deployment.pendingUpgrade));
  if (deployment.pendingParallelism) return goTo('RESCALING', 'parallelism change requested after a failure: restarting');
  if (restartRequested(deployment)) return goTo('STARTING', 'desired state RUNNING set again after the failure: restarting');
  return stay();
};

/** The API bumps updated_at on every change; the reconciler's own transition stamps updated_at before status_changed_at. */
export function restartRequested(d: Deployment): boolean {
  return d.desiredState === 'RUNNING' && d.updatedAt > d.statusChangedAt;
}

import { goTo, stay, type StateHandler } from '../state-machine';
import { upgradeReason } from './upgrade-reason';

/**
 * The job failed; it stays failed (no restart loop) until the tenant acts: suspend (then resume) or cancel it,
 * upgrade it, or change its parallelism.
 */
export const failed: StateHandler = async ({ deployment }) => {
  if (deployment.desiredState === 'CANCELLED') return goTo('CANCELLED', 'cancelled after a failure');
  if (deployment.desiredState === 'SUSPENDED') return goTo('SUSPENDED', 'suspended after a failure');
  if (deployment.pendingUpgrade) return goTo('UPGRADING', upgradeReason(deployment.pendingUpgrade));
  if (deployment.pendingParallelism) return goTo('RESCALING', 'parallelism change requested after a failure: restarting');
  return stay();
};

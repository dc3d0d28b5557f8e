import { goTo, stay, type StateHandler } from '../state-machine';
import { restartRequested } from './failed';
import { upgradeReason } from './upgrade-reason';

/** The job ended on its own (bounded sources). Start it again (PATCH RUNNING), suspend, cancel or upgrade it. */
export const finished: StateHandler = async ({ deployment }) => {
  if (deployment.desiredState === 'CANCELLED') return goTo('CANCELLED', 'cancelled after finishing');
  if (deployment.desiredState === 'SUSPENDED') return goTo('SUSPENDED', 'suspended after finishing');
  if (deployment.pendingUpgrade) return goTo('UPGRADING', upgradeReason(deployment.pendingUpgrade));
  if (restartRequested(deployment)) return goTo('STARTING', 'desired state RUNNING set again after it finished: starting again');
  return stay();
};

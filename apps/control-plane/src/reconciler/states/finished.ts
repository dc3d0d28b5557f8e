import { goTo, stay, type StateHandler } from '../state-machine';
import { upgradeReason } from './upgrade-reason';

/** The job ended on its own (bounded sources). Suspend, cancel or upgrade it to move on. */
export const finished: StateHandler = async ({ deployment }) => {
  if (deployment.desiredState === 'CANCELLED') return goTo('CANCELLED', 'cancelled after finishing');
  if (deployment.desiredState === 'SUSPENDED') return goTo('SUSPENDED', 'suspended after finishing');
  if (deployment.pendingUpgrade) return goTo('UPGRADING', upgradeReason(deployment.pendingUpgrade));
  return stay();
};

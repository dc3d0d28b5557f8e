import { goTo, stay, type StateHandler } from '../state-machine';

/** Stopped on request. Resumes on desired RUNNING (pending upgrades and parallelism apply then). */
export const suspended: StateHandler = async ({ deployment }) => {
  if (deployment.desiredState === 'RUNNING') return goTo('STARTING', 'desired state RUNNING: resuming');
  if (deployment.desiredState === 'CANCELLED') return goTo('CANCELLED', 'cancelled while suspended');
  return stay();
};

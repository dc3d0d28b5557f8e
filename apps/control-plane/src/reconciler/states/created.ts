import { goTo, stay, type StateHandler } from '../state-machine';

/** Accepted, never started: start it, or settle where the desired state says. */
export const created: StateHandler = async ({ deployment }) => {
  switch (deployment.desiredState) {
    case 'RUNNING':
      return goTo('STARTING', 'desired state RUNNING: starting the first run');
    case 'SUSPENDED':
      return goTo('SUSPENDED', 'created with desired state SUSPENDED');
    case 'CANCELLED':
      return goTo('CANCELLED', 'cancelled before it ever started');
  }
  return stay();
};

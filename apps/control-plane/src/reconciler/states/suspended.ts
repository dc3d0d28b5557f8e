import { goTo, stay, type StateHandler } from '../state-machine';

/**
 * Stopped on request. Resumes on desired RUNNING (pending upgrades and parallelism apply then), from the state kept
 * when it stopped or a restore the tenant requested (PATCH with resumeMode stateless dropped it: no state).
 */
export const suspended: StateHandler = async ({ deployment }) => {
  if (deployment.desiredState === 'RUNNING') {
    const restore = deployment.pendingRestore;
    if (deployment.pendingUpgrade?.mode === 'stateless' && restore?.origin !== 'requested') {
      return goTo('STARTING', 'desired state RUNNING: resuming into a stateless upgrade, without state');
    }
    if (!restore) return goTo('STARTING', 'desired state RUNNING: resuming without state (none was kept)');
    const what = restore.origin === 'requested' ? `the requested restore: ${restore.reason}` : restore.reason;
    return goTo('STARTING', `desired state RUNNING: resuming from ${what}`);
  }
  if (deployment.desiredState === 'CANCELLED') return goTo('CANCELLED', 'cancelled while suspended');
  return stay();
};

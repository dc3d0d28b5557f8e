import type { DeploymentStatus } from '../../deployments/deployment';
import { goTo, openRun, stay, type StateHandler } from '../state-machine';

/** Stopping toward SUSPENDED or CANCELLED: stop-subtasks sent, waiting for the worker to drop the job. */
export const stopping: StateHandler = async (ctx) => {
  const { deployment, job, actions } = ctx;
  const target: DeploymentStatus = deployment.desiredState === 'CANCELLED' ? 'CANCELLED' : 'SUSPENDED';
  const run = openRun(ctx);
  if (!run) return goTo(target, `no run to stop; desired state ${deployment.desiredState}`);
  if (job.kind === 'worker-gone' || job.kind === 'worker-restarted') {
    await actions.stopRun(run, `desired state ${deployment.desiredState}`);
    await actions.endRun(run, 'LOST', `worker ${run.workerId} went away while the run was stopping`);
    return goTo(target, `run ${run.runNo} ended: its worker went away while stopping`);
  }
  await actions.stopRun(run, `desired state ${deployment.desiredState}`);
  if (job.kind !== 'absent') return stay(`waiting for worker ${run.workerId} to stop run ${run.runNo}`);
  await actions.endRun(run, 'STOPPED', `stopped: desired state ${deployment.desiredState}`);
  return goTo(target, `run ${run.runNo} stopped on worker ${run.workerId}`);
};

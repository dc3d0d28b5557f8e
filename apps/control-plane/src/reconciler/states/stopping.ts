import type { DeploymentStatus } from '../../deployments/deployment';
import { goTo, openRun, stay, suspendSavepointId, type StateHandler } from '../state-machine';

/**
 * Stopping toward SUSPENDED or CANCELLED: stop-subtasks sent, waiting for the worker to drop the job. Toward
 * SUSPENDED the stop takes a savepoint, and once the run ended its state is kept for the resume: that savepoint
 * (or the tenant's own stop-with-savepoint, when one was in flight), else the latest checkpoint.
 */
export const stopping: StateHandler = async (ctx) => {
  const { deployment, job, actions } = ctx;
  const target: DeploymentStatus = deployment.desiredState === 'CANCELLED' ? 'CANCELLED' : 'SUSPENDED';
  const run = openRun(ctx);
  if (!run) return goTo(target, `no run to stop; desired state ${deployment.desiredState}`);
  const savepointId = target === 'SUSPENDED' ? suspendSavepointId(run) : undefined;
  if (job.kind === 'worker-gone' || job.kind === 'worker-restarted') {
    await actions.stopRun(run, `desired state ${deployment.desiredState}`);
    await actions.endRun(run, 'LOST', `worker ${run.workerId} went away while the run was stopping`);
    const kept = target === 'SUSPENDED' ? `; ${await actions.keepState(run, [], 'its worker went away while it stopped')}` : '';
    return goTo(target, `run ${run.runNo} ended: its worker went away while stopping${kept}`);
  }
  await actions.stopRun(run, `desired state ${deployment.desiredState}`, savepointId);
  if (job.kind !== 'absent') return stay(`waiting for worker ${run.workerId} to stop run ${run.runNo}`);
  await actions.endRun(run, 'STOPPED', `stopped: desired state ${deployment.desiredState}`);
  if (target === 'CANCELLED') return goTo(target, `run ${run.runNo} stopped on worker ${run.workerId}`);
  const userStop = deployment.pendingStop?.runNo === run.runNo ? [deployment.pendingStop.savepointId] : [];
  const kept = await actions.keepState(run, [...userStop, savepointId!]);
  return goTo(target, `run ${run.runNo} stopped on worker ${run.workerId}; ${kept}`);
};

import type { DeploymentStatus } from '../../deployments/deployment';
import { goneReason, processesOf, runWorkers } from '../run-reasons';
import { goTo, openRun, stay, suspendSavepointId, type StateHandler } from '../state-machine';

/**
 * Stopping toward SUSPENDED or CANCELLED: stop-subtasks sent to every process, waiting for every worker to drop the
 * job. Toward SUSPENDED the stop takes a savepoint (process 0 takes it), and once the run ended its state is kept for
 * the resume: that savepoint (or the tenant's own stop-with-savepoint, when one was in flight), else the latest
 * checkpoint.
 */
export const stopping: StateHandler = async (ctx) => {
  const { deployment, job, actions } = ctx;
  const target: DeploymentStatus = deployment.desiredState === 'CANCELLED' ? 'CANCELLED' : 'SUSPENDED';
  const run = openRun(ctx);
  if (!run) return goTo(target, `no run to stop; desired state ${deployment.desiredState}`);
  const savepointId = target === 'SUSPENDED' ? suspendSavepointId(run) : undefined;
  if (job.kind === 'process-gone') {
    // The survivors still get the stop; a savepoint cannot complete without the gone process, so none is awaited.
    const gone = goneReason(job, run.runNo);
    await actions.stopRun(run, `desired state ${deployment.desiredState}`);
    await actions.endRun(run, 'LOST', `${gone}; the run was stopping`);
    const kept = target === 'SUSPENDED' ? `; ${await actions.keepState(run, [], gone)}` : '';
    return goTo(target, `run ${run.runNo} ended as it stopped: ${gone}${kept}`);
  }
  await actions.stopRun(run, `desired state ${deployment.desiredState}`, savepointId);
  if (job.kind !== 'absent') {
    const reporting = job.kind === 'no-run' || job.reporting.length === 0 ? runWorkers(run) : processesOf(run, job.reporting);
    return stay(`waiting for ${reporting} to stop run ${run.runNo}`);
  }
  await actions.endRun(run, 'STOPPED', `stopped: desired state ${deployment.desiredState}`);
  if (target === 'CANCELLED') return goTo(target, `run ${run.runNo} stopped on ${runWorkers(run)}`);
  const userStop = deployment.pendingStop?.runNo === run.runNo ? [deployment.pendingStop.savepointId] : [];
  const kept = await actions.keepState(run, [...userStop, savepointId!]);
  return goTo(target, `run ${run.runNo} stopped on ${runWorkers(run)}; ${kept}`);
};

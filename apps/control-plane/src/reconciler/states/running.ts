import type { DeploymentRun } from '../../deployments/deployment';
import { goTo, openRun, stay, suspendSavepointId, type Next, type ReconcileContext, type StateHandler } from '../state-machine';
import { failReported } from '../fail-run';
import { upgradeReason } from './upgrade-reason';

/** Running: watch the worker, and turn requested changes into the status that carries them out. */
export const running: StateHandler = async (ctx) => {
  const { deployment, job, actions } = ctx;
  const run = openRun(ctx);
  if (!run) return goTo('RECOVERING', 'no open run while RUNNING');
  if (deployment.desiredState !== 'RUNNING') {
    if (deployment.desiredState === 'SUSPENDED') {
      // Suspend keeps the job's state: stop with a savepoint (the worker stops without one when it cannot be taken;
      // STOPPING then keeps the latest checkpoint instead).
      const savepointId = suspendSavepointId(run);
      await actions.stopRun(run, 'desired state SUSPENDED', savepointId);
      return goTo('STOPPING', `desired state SUSPENDED: stop-with-savepoint ${savepointId} sent to worker ${run.workerId}`);
    }
    await actions.stopRun(run, `desired state ${deployment.desiredState}`);
    return goTo('STOPPING', `desired state ${deployment.desiredState}: stop-subtasks sent to worker ${run.workerId}`);
  }
  if (deployment.pendingStop?.runNo === run.runNo) {
    const settled = await settleStopWithSavepoint(ctx, run, deployment.pendingStop.savepointId);
    if (settled) return settled;
  }
  if (deployment.pendingUpgrade) return goTo('UPGRADING', upgradeReason(deployment.pendingUpgrade));
  if (deployment.pendingParallelism) {
    return goTo('RESCALING', 'parallelism change requested: restarting with the new parallelism from the latest checkpoint');
  }
  if (deployment.pendingRestore?.origin === 'requested') {
    // Restoring a running deployment: the run stops, the next one (UPGRADING places it) takes the restore.
    return goTo('UPGRADING', `restore requested (${deployment.pendingRestore.reason}): stopping run ${run.runNo}, then starting from it`);
  }
  switch (job.kind) {
    case 'worker-gone':
      return goTo('RECOVERING', `worker ${job.workerId} is ${job.workerStatus}: re-placing the job, restoring its latest checkpoint`);
    case 'worker-restarted':
      return goTo('RECOVERING', `worker ${job.workerId} restarted without the job: re-placing it, restoring its latest checkpoint`);
    case 'failed':
      return failReported(ctx, run);
    case 'absent':
      // A running job that leaves its worker's report on its own has finished (every source ended).
      await actions.endRun(run, 'FINISHED', 'the job ended on its own');
      return goTo('FINISHED', `run ${run.runNo}: the job ended on its own (its sources are exhausted)`);
    default:
      return stay();
  }
};

/**
 * The tenant's stop-with-savepoint (POST …/savepoints with stop): the worker stops the job only once the savepoint
 * is on S3, and only then does the desired state become SUSPENDED. A savepoint that fails leaves the job running
 * (the failure is on the savepoint resource). Null: nothing to settle here, the usual checks apply.
 */
async function settleStopWithSavepoint(ctx: ReconcileContext, run: DeploymentRun, savepointId: string): Promise<Next | null> {
  const { job, actions } = ctx;
  if (job.kind === 'absent') {
    if (!(await actions.savepointTaken(savepointId))) return null; // gone without its savepoint: ended on its own
    await actions.endRun(run, 'STOPPED', `stopped with savepoint ${savepointId} (stop-with-savepoint)`);
    const kept = await actions.keepState(run, [savepointId]);
    await actions.suspendAfterStop();
    return goTo('SUSPENDED', `run ${run.runNo} stopped with savepoint ${savepointId} on worker ${run.workerId} (stop-with-savepoint); ${kept}`);
  }
  if (job.kind !== 'running' && job.kind !== 'changing') return null;
  const refused = await actions.savepointRefused(run, savepointId);
  if (refused) {
    await actions.clearPendingStop(savepointId);
    return stay(`stop-with-savepoint ${savepointId} failed, so the job keeps running: ${refused}`);
  }
  return stay(`stop-with-savepoint ${savepointId}: waiting for the savepoint, then the stop`);
}

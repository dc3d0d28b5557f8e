import type { DeploymentRun, PendingStop } from '../../deployments/deployment';
import { goTo, openRun, stay, suspendSavepointId, type Next, type ReconcileContext, type StateHandler } from '../state-machine';
import { failReported } from '../fail-run';
import { goneSummary, runWorkers } from '../run-reasons';
import { upgradeReason } from './upgrade-reason';

/** Running: watch the run's workers, and turn requested changes into the status that carries them out. */
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
      return goTo('STOPPING', `desired state SUSPENDED: stop-with-savepoint ${savepointId} sent to ${runWorkers(run)}`);
    }
    await actions.stopRun(run, `desired state ${deployment.desiredState}`);
    return goTo('STOPPING', `desired state ${deployment.desiredState}: stop-subtasks sent to ${runWorkers(run)}`);
  }
  if (deployment.pendingStop?.runNo === run.runNo) {
    const settled = await settleStopWithSavepoint(ctx, run, deployment.pendingStop);
    if (settled) return settled;
  }
  if (deployment.pendingUpgrade) return goTo('UPGRADING', upgradeReason(deployment.pendingUpgrade));
  // A requested restore goes first: its run restarts from the snapshot anyway (the parallelism then goes with it).
  if (deployment.pendingParallelism && deployment.pendingRestore?.origin !== 'requested') return goTo('RESCALING', await actions.beginRescale(run));
  if (deployment.pendingRestore?.origin === 'requested') {
    // Restoring a running deployment: the run stops, the next one (UPGRADING places it) takes the restore.
    return goTo('UPGRADING', `restore requested (${deployment.pendingRestore.reason}): stopping run ${run.runNo}, then starting from it`);
  }
  switch (job.kind) {
    case 'process-gone':
      // One process gone is the whole run gone (the others cannot complete a checkpoint without it): RECOVERING
      // writes it off, stops the survivors and places the job again.
      return goTo('RECOVERING', `${goneSummary(job, run.runNo)}: re-placing the job, restoring its latest checkpoint`);
    case 'failed':
      return failReported(ctx, run);
    case 'absent':
      // A running job that leaves every worker's report on its own has finished (every source ended).
      await actions.endRun(run, 'FINISHED', 'the job ended on its own');
      return goTo('FINISHED', `run ${run.runNo}: the job ended on its own (its sources are exhausted)`);
    default:
      return stay();
  }
};

/**
 * How long a stop-with-savepoint may go without its command in the worker's queue before it counts as lost. The
 * trigger records the stop, then sends the command (bounded by seconds); a command not queued a minute later never
 * will be (the control plane died between the two, or Redis lost its data).
 */
export const LOST_STOP_COMMAND_AFTER_MS = 60_000;

/**
 * The tenant's stop-with-savepoint (POST …/savepoints with stop): the worker stops the job only once the savepoint
 * is on S3, and only then does the desired state become SUSPENDED. A savepoint that fails, or whose command was
 * lost, leaves the job running (the failure is on the savepoint resource; a lost one is gone from it, so the
 * tenant may trigger again). Null: nothing to settle here, the usual checks apply.
 */
async function settleStopWithSavepoint(ctx: ReconcileContext, run: DeploymentRun, stop: PendingStop): Promise<Next | null> {
  const { job, actions } = ctx;
  const { savepointId } = stop;
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
  const pendingMs = ctx.now.getTime() - Date.parse(stop.requestedAt);
  if (pendingMs > LOST_STOP_COMMAND_AFTER_MS && !(await actions.savepointTaken(savepointId)) && (await actions.savepointCommandMissing(run, savepointId))) {
    await actions.clearPendingStop(savepointId);
    return stay(
      `stop-with-savepoint ${savepointId} was lost: its command is not in worker ${run.workerId}'s queue ${Math.round(pendingMs / 1000)} s after the request, so the job keeps running; trigger it again`,
    );
  }
  return stay(`stop-with-savepoint ${savepointId}: waiting for the savepoint, then the stop`);
}

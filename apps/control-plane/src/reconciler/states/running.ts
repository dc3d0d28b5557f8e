import { goTo, openRun, stay, type StateHandler } from '../state-machine';
import { upgradeReason } from './upgrade-reason';

/** Running: watch the worker, and turn requested changes into the status that carries them out. */
export const running: StateHandler = async (ctx) => {
  const { deployment, job, actions } = ctx;
  const run = openRun(ctx);
  if (!run) return goTo('RECOVERING', 'no open run while RUNNING');
  if (deployment.desiredState !== 'RUNNING') {
    await actions.stopRun(run, `desired state ${deployment.desiredState}`);
    return goTo('STOPPING', `desired state ${deployment.desiredState}: stop-subtasks sent to worker ${run.workerId}`);
  }
  if (deployment.pendingUpgrade) return goTo('UPGRADING', upgradeReason(deployment.pendingUpgrade));
  if (deployment.pendingParallelism) {
    return goTo('RESCALING', 'parallelism change requested: restarting with the new parallelism from the latest checkpoint');
  }
  switch (job.kind) {
    case 'worker-gone':
      return goTo('RECOVERING', `worker ${job.workerId} is ${job.workerStatus}: re-placing the job, restoring its latest checkpoint`);
    case 'worker-restarted':
      return goTo('RECOVERING', `worker ${job.workerId} restarted without the job: re-placing it, restoring its latest checkpoint`);
    case 'failed':
      await actions.stopRun(run, 'failed: releasing its slots');
      await actions.endRun(run, 'FAILED', `worker ${run.workerId} reports the job FAILED`);
      return goTo('FAILED', `run ${run.runNo}: worker ${run.workerId} reports the job FAILED (see the worker's log for the error)`);
    case 'absent':
      // A running job that leaves its worker's report on its own has finished (every source ended).
      await actions.endRun(run, 'FINISHED', 'the job ended on its own');
      return goTo('FINISHED', `run ${run.runNo}: the job ended on its own (its sources are exhausted)`);
    default:
      return stay();
  }
};

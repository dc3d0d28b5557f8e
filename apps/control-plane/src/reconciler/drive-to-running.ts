import type { DeploymentRun } from '../deployments/deployment';
import { LATEST_CHECKPOINT, latestCheckpointOf } from '../savepoints/restore-points';
import { failReported, failRun } from './fail-run';
import { describeRestore, goTo, openRun, stay, upgradeSavepointId, type Next, type ReconcileContext } from './state-machine';

/**
 * The body shared by STARTING, RESCALING, RECOVERING and UPGRADING: end the run that was open when the status was
 * entered (stop it, or write it off when its worker is gone), adopt any pending bundle or parallelism, place and
 * dispatch the next run, and report RUNNING once its worker does. Each call does what it can now and returns.
 */
export async function driveToRunning(ctx: ReconcileContext): Promise<Next> {
  const { deployment, job, actions } = ctx;
  if (deployment.desiredState !== 'RUNNING') {
    return goTo('STOPPING', `desired state ${deployment.desiredState} while ${deployment.status}`);
  }
  const open = openRun(ctx);
  if (open && open.placedAt < deployment.statusChangedAt) {
    // The run from before this status: it must be gone before the next one starts (a worker runs a job once).
    if (job.kind === 'worker-gone' || job.kind === 'worker-restarted') {
      await actions.stopRun(open, 'replaced: its worker was lost'); // queued in case the worker comes back
      await actions.endRun(open, 'LOST', lostReason(job.kind, open));
    } else {
      const savepointId = takesUpgradeSavepoint(deployment) ? upgradeSavepointId(open) : undefined;
      await actions.stopRun(open, `replaced by a new run (${deployment.status})`, savepointId);
      if (job.kind !== 'absent') return stay(`stopping run ${open.runNo} on worker ${open.workerId}`);
      await actions.endRun(open, 'REPLACED', `stopped for ${deployment.status}`);
      // A savepoint upgrade starts from the savepoint its stop took (else from the latest checkpoint, said so).
      if (savepointId) await actions.keepState(open, [savepointId]);
    }
    return place(ctx);
  }
  if (!open) return place(ctx);
  return watchNewRun(ctx, open);
}

async function place(ctx: ReconcileContext): Promise<Next> {
  const { deployment, actions } = ctx;
  const bundleId = deployment.pendingUpgrade?.bundleId ?? deployment.bundleId;
  const parallelism = deployment.pendingParallelism ?? deployment.parallelism;
  if (deployment.pendingUpgrade) await actions.adoptPendingUpgrade();
  if (deployment.pendingParallelism) await actions.adoptPendingParallelism();
  const result = await actions.placeRun({
    bundleId,
    parallelism,
    reason: `${deployment.status}: ${deployment.statusReason}`,
    restoreFrom: unfinishedRestore(ctx) ?? restoreFromFor(deployment),
    keptState: deployment.pendingUpgrade?.mode !== 'stateless',
  });
  if (!result.placed) return stay(result.reason);
  // Dispatched by the next step, once this placement (the run row and its worker) is committed: a crash between
  // send and commit can then only resend the same key to the same worker, never pick another worker for it.
  return stay(`run ${result.run.runNo} placed on worker ${result.run.workerId}`, true);
}

async function watchNewRun(ctx: ReconcileContext, run: DeploymentRun): Promise<Next> {
  const { job, actions, deployment } = ctx;
  await actions.dispatchRun(run);
  switch (job.kind) {
    case 'running':
      await actions.markRunning(run);
      return goTo('RUNNING', `run ${run.runNo}: ${job.subtasks} subtasks running on worker ${run.workerId}; ${describeRestore(run.restoreFrom)}`);
    case 'worker-gone':
    case 'worker-restarted': {
      const reason = lostReason(job.kind, run);
      await actions.stopRun(run, 'replaced: its worker was lost');
      await actions.endRun(run, 'LOST', reason);
      return deployment.status === 'RECOVERING' ? place(ctx) : goTo('RECOVERING', reason);
    }
    case 'failed':
      return failReported(ctx, run);
    default: {
      const refused = await actions.runFailure(run);
      if (refused) return failRun(ctx, run, 'refused: releasing what the worker holds of it', refused, `run ${run.runNo}: worker ${run.workerId} refused it: ${refused}`);
      const since = (run.dispatchedAt ?? run.placedAt).getTime();
      if (ctx.now.getTime() - since > ctx.startTimeoutMs) {
        const within = `within ${ctx.startTimeoutMs / 1000} s`;
        return failRun(ctx, run, 'did not start in time', `not reported running ${within}`, `run ${run.runNo}: worker ${run.workerId} did not report it running ${within}`);
      }
      return stay();
    }
  }
}

/**
 * A recovery, a rescale or a last-state upgrade continues from the job's newest usable checkpoint (the job host
 * finds it on S3, falls back past a damaged one, and starts fresh when none exists yet); so does a savepoint
 * upgrade whose old run could not take its savepoint (its worker was lost). Other starts begin without state
 * unless a restore is pending (placeRun takes it first: one the tenant requested, or the state kept at a stop).
 */
function restoreFromFor(deployment: ReconcileContext['deployment']): DeploymentRun['restoreFrom'] {
  const mode = deployment.status === 'UPGRADING' ? deployment.pendingUpgrade?.mode : undefined;
  const latest = deployment.status === 'RECOVERING' || deployment.status === 'RESCALING' || mode === 'last-state' || mode === 'savepoint';
  return latest ? latestCheckpointOf(deployment.tenantId, deployment.id) : null;
}

/**
 * A recovery of a run that restored a savepoint but never ran: that savepoint is still the job's state (the latest
 * checkpoint is older than it, and its exactly-once output is committed: restoring the checkpoint would repeat it).
 */
function unfinishedRestore(ctx: ReconcileContext): DeploymentRun['restoreFrom'] {
  const previous = ctx.run;
  if (ctx.deployment.status !== 'RECOVERING' || !previous || previous.runningAt || !previous.restoreFrom) return null;
  return previous.restoreFrom.snapshotId === LATEST_CHECKPOINT ? null : previous.restoreFrom;
}

/** A savepoint upgrade stops the old run with a savepoint, unless the tenant named the savepoint to restore. */
function takesUpgradeSavepoint(deployment: ReconcileContext['deployment']): boolean {
  return deployment.status === 'UPGRADING' && deployment.pendingUpgrade?.mode === 'savepoint' && deployment.pendingRestore?.origin !== 'requested';
}

function lostReason(kind: 'worker-gone' | 'worker-restarted', run: DeploymentRun): string {
  return kind === 'worker-restarted'
    ? `worker ${run.workerId} restarted and no longer runs run ${run.runNo}`
    : `worker ${run.workerId} is no longer alive (LOST or STOPPED) while hosting run ${run.runNo}`;
}

import type { DeploymentRun } from '../deployments/deployment';
import { placementTimeoutOf } from '../placement/placement-settings';
import { LATEST_CHECKPOINT, latestCheckpointOf } from '../savepoints/restore-points';
import { failReported, failRun } from './fail-run';
import type { JobObservation } from './job-observation';
import { goneReason, processesOf, runLayout } from './run-reasons';
import { describeRestore, goTo, openRun, stay, upgradeSavepointId, type Next, type ReconcileContext } from './state-machine';

/**
 * The body shared by STARTING, RESCALING, RECOVERING and UPGRADING: end the run that was open when the status was
 * entered (stop it, or write it off when one of its processes is gone), adopt any pending bundle or parallelism,
 * place and dispatch the next run, and report RUNNING once every process of it runs. Each call does what it can now
 * and returns.
 */
export async function driveToRunning(ctx: ReconcileContext): Promise<Next> {
  const { deployment, job, actions } = ctx;
  if (deployment.desiredState !== 'RUNNING') {
    return goTo('STOPPING', `desired state ${deployment.desiredState} while ${deployment.status}`);
  }
  const open = openRun(ctx);
  if (open && open.placedAt < deployment.statusChangedAt) {
    // The run from before this status: it must be gone before the next one starts (a worker runs a job once).
    if (job.kind === 'process-gone') {
      await writeOff(ctx, open, job);
    } else {
      const savepointId = takesUpgradeSavepoint(deployment) ? upgradeSavepointId(open) : undefined;
      await actions.stopRun(open, `replaced by a new run (${deployment.status})`, savepointId);
      if (job.kind !== 'absent') return stay(`stopping run ${open.runNo} on ${stillReporting(open, job)}`);
      await actions.endRun(open, 'REPLACED', `stopped for ${deployment.status}`);
      // A savepoint upgrade starts from the savepoint its stop took (else from the latest checkpoint, said so).
      if (savepointId) await actions.keepState(open, [savepointId]);
    }
    return place(ctx);
  }
  if (!open) return place(ctx);
  return watchNewRun(ctx, open);
}

/**
 * A run with a gone process is written off whole: its other processes cannot complete a checkpoint without it. The
 * stop goes to every process (the survivors stop; a lost worker finds it queued should it come back), and the next
 * run restores the latest checkpoint. place() waits for the survivors to leave their workers before the next run.
 */
async function writeOff(ctx: ReconcileContext, run: DeploymentRun, job: Extract<JobObservation, { kind: 'process-gone' }>): Promise<string> {
  const reason = goneReason(job, run.runNo);
  await ctx.actions.stopRun(run, `written off: ${reason}`);
  await ctx.actions.endRun(run, 'LOST', reason);
  return reason;
}

async function place(ctx: ReconcileContext): Promise<Next> {
  const { deployment, actions } = ctx;
  const survivors = survivorsOfLastRun(ctx);
  if (survivors) return survivors;
  const bundleId = deployment.pendingUpgrade?.bundleId ?? deployment.bundleId;
  const parallelism = deployment.pendingParallelism ?? deployment.parallelism;
  const restoreFrom = unfinishedRestore(ctx) ?? restoreFromFor(deployment);
  const result = await actions.placeRun({
    bundleId,
    parallelism,
    reason: `${deployment.status}: ${deployment.statusReason}`,
    restoreFrom,
    keptState: deployment.pendingUpgrade?.mode !== 'stateless',
  });
  if (!result.placed) return waitForSlots(ctx, result.reason, restoreFrom);
  // Adopted once placed, not before: while the run waits for slots, the pending upgrade's mode still decides what
  // it restores (restoreFromFor), on every attempt.
  await adoptPending(ctx);
  // Dispatched by the next step, once this placement (the run row and its layout) is committed: a crash between
  // send and commit can then only resend the same keys to the same workers, never pick other workers for them.
  return stay(`run ${result.run.runNo} placed on ${runLayout(result.run)}`, true);
}

async function adoptPending({ deployment, actions }: ReconcileContext): Promise<void> {
  if (deployment.pendingUpgrade) await actions.adoptPendingUpgrade();
  if (deployment.pendingParallelism) await actions.adoptPendingParallelism();
}

/**
 * Processes of the previous run still on their workers (survivors of a write-off, or still stopping): the next run
 * waits for them, as a worker runs a job's process once and they still hold their slots. Bounded by the start
 * timeout from the stop: a worker that never drops them must not keep the job down (their slots stay counted,
 * since placement counts what workers report).
 */
function survivorsOfLastRun(ctx: ReconcileContext): Next | null {
  const previous = ctx.run;
  if (!previous || ctx.job.kind === 'no-run' || ctx.job.reporting.length === 0) return null;
  const since = (previous.stopSentAt ?? previous.endedAt ?? ctx.now).getTime();
  if (ctx.now.getTime() - since > ctx.startTimeoutMs) return null;
  return stay(`waiting for run ${previous.runNo} to leave ${stillReporting(previous, ctx.job)} before the next run starts`);
}

/**
 * No room for the run: stay, saying what it waits for, until the deployment's placement timeout; then FAILED with
 * the reason (docs/deployments.md: FAILED rather than running at what fits). The state the run would have restored
 * is kept for the restart, and a pending upgrade or parallelism adopted (FAILED would otherwise take it as a new
 * request and start over at once).
 */
async function waitForSlots(ctx: ReconcileContext, reason: string, restoreFrom: DeploymentRun['restoreFrom']): Promise<Next> {
  const { deployment, actions } = ctx;
  const timeoutMs = placementTimeoutOf(deployment.config);
  const since = waitingSince(ctx);
  const deadline = new Date(since + timeoutMs);
  if (ctx.now <= deadline) return stay(`${reason}; FAILED at ${deadline.toISOString()} if still not placed`);
  await adoptPending(ctx);
  let kept = 'a restart starts without state';
  if (restoreFrom && !deployment.pendingRestore) {
    const savepoints = restoreFrom.snapshotId === LATEST_CHECKPOINT ? [] : [restoreFrom.snapshotId];
    kept = (await actions.keepState(ctx.run, savepoints)).replace(/^a resume restores/, 'a restart restores');
  } else if (deployment.pendingRestore) {
    kept = `a restart restores ${deployment.pendingRestore.reason}`;
  }
  return goTo('FAILED', `no run could be placed within ${timeoutMs / 1000} s: ${reason}; ${kept}`);
}

/** Since when the deployment has wanted a run placed: entering this status, or the end of the previous run since. */
function waitingSince(ctx: ReconcileContext): number {
  const ended = ctx.run?.endedAt?.getTime() ?? 0;
  return Math.max(ctx.deployment.statusChangedAt.getTime(), ended);
}

async function watchNewRun(ctx: ReconcileContext, run: DeploymentRun): Promise<Next> {
  const { job, actions, deployment } = ctx;
  await actions.dispatchRun(run);
  switch (job.kind) {
    case 'running':
      await actions.markRunning(run);
      return goTo('RUNNING', `run ${run.runNo}: ${job.subtasks} subtasks running on ${runLayout(run)}; ${describeRestore(run.restoreFrom)}`);
    case 'process-gone': {
      const reason = await writeOff(ctx, run, job);
      return deployment.status === 'RECOVERING' ? place(ctx) : goTo('RECOVERING', `${reason}: re-placing the job, restoring its latest checkpoint`);
    }
    case 'failed':
      return failReported(ctx, run);
    default: {
      const refused = await actions.runFailure(run);
      if (refused) {
        const which = run.processes.length > 1 ? ` (process ${refused.process} of ${run.processes.length})` : '';
        return failRun(ctx, run, 'refused: releasing what the workers hold of it', refused.reason, `run ${run.runNo}: worker ${refused.workerId} refused it${which}: ${refused.reason}`);
      }
      const since = (run.dispatchedAt ?? run.placedAt).getTime();
      if (ctx.now.getTime() - since > ctx.startTimeoutMs) {
        const within = `within ${ctx.startTimeoutMs / 1000} s`;
        const late = job.kind === 'no-run' ? run.processes.map((p) => ({ process: p.index, workerId: p.workerId })) : job.notRunning;
        return failRun(ctx, run, 'did not start in time', `not reported running ${within}`, `run ${run.runNo}: ${processesOf(run, late)} did not report it running ${within}`);
      }
      return stay();
    }
  }
}

/** The processes of a run that its workers still report, in words (all of its workers when none is named). */
function stillReporting(run: DeploymentRun, job: JobObservation): string {
  const refs = job.kind === 'no-run' || job.reporting.length === 0 ? run.processes.map((p) => ({ process: p.index, workerId: p.workerId })) : job.reporting;
  return processesOf(run, refs);
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

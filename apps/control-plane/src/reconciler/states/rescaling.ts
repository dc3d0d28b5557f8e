import { RESCALE_IN_FLIGHT, type LiveRescale } from '../../deployments/deployment';
import { driveToRunning } from '../drive-to-running';
import { failReported } from '../fail-run';
import { goneSummary } from '../run-reasons';
import { goTo, openRun, stay, type Next, type ReconcileContext, type StateHandler } from '../state-machine';

/**
 * A parallelism change. Live (docs/deployments.md, "Rescaling"): the run keeps running while processes join it or
 * retire from it and process 0 moves key groups (live-rescale-driver.ts), then RUNNING with the run's new layout.
 * Otherwise, or when the live rescale falls back: stop the run, start one with the new parallelism from the latest
 * checkpoint (key groups go to their new owners), as driveToRunning does.
 */
export const rescaling: StateHandler = async (ctx) => {
  const rescale = ctx.deployment.rescale;
  if (rescale && RESCALE_IN_FLIGHT.includes(rescale.state)) return liveRescaling(ctx, rescale);
  return afterFallBack(ctx, await driveToRunning(ctx));
};

async function liveRescaling(ctx: ReconcileContext, rescale: LiveRescale): Promise<Next> {
  const { deployment, job, actions } = ctx;
  const run = openRun(ctx);
  if (!run || run.runNo !== rescale.runNo) {
    // Its run ended some other way: the change is still pending, and the restart path places the new parallelism.
    await actions.abandonRescale(rescale, `run ${rescale.runNo} ended before the rescale completed`);
    return driveToRunning(ctx);
  }
  if (deployment.desiredState !== 'RUNNING') {
    await actions.abandonRescale(rescale, `desired state ${deployment.desiredState} while it ran: the run stops`);
    return driveToRunning(ctx);
  }
  if (job.kind === 'process-gone') {
    // Process 0, a joiner or any other process gone: the run cannot complete a checkpoint without it, so it is lost
    // whole, and the recovery places the new parallelism (the checkpoint restores at any layout).
    const gone = goneSummary(job, run.runNo);
    await actions.abandonRescale(rescale, `${gone}: the run is lost, and recovers at the new parallelism`);
    return goTo('RECOVERING', `${gone} during live rescale ${rescale.rescaleId}: re-placing the job at the new parallelism, restoring its latest checkpoint`);
  }
  if (job.kind === 'failed') {
    await actions.abandonRescale(rescale, 'the job failed');
    return failReported(ctx, run);
  }
  const step = await actions.stepLiveRescale(rescale, run, ctx.now);
  switch (step.kind) {
    case 'stay':
      return stay(step.note, step.again);
    case 'running':
      return goTo('RUNNING', step.reason);
    case 'restart':
      return prefixed(await driveToRunning(ctx), fallBackWords(rescale.rescaleId, step.reason));
  }
}

/** While the restart a live rescale fell back to runs, its reasons say so (the rescale's record says why at length). */
function afterFallBack(ctx: ReconcileContext, next: Next): Next {
  const r = ctx.deployment.rescale;
  const now = r?.state === 'FELL_BACK' && r.finishedAt && r.finishedAt >= ctx.deployment.statusChangedAt;
  return now ? prefixed(next, fallBackWords(r.rescaleId, r.reason)) : next;
}

function fallBackWords(rescaleId: string, reason: string): string {
  return `live rescale ${rescaleId} fell back to a restart (${reason})`;
}

function prefixed(next: Next, words: string): Next {
  if (next.kind === 'transition') return { ...next, reason: `${words}; ${next.reason}` };
  return { ...next, note: next.note ? `${words}; ${next.note}` : words };
}

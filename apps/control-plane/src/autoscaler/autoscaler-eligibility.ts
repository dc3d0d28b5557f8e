import { RESCALE_IN_FLIGHT, type Deployment, type DeploymentRun } from '../deployments/deployment';
import type { KeyGroupMove } from '../moves/key-group-move';

export type AutoscalerEligibility = { readonly ok: true; readonly run: DeploymentRun } | { readonly ok: false; readonly why: string };

/**
 * Whether the autoscaler may look at the deployment now, and on which run. One change at a time: a live rescale in
 * flight, a key-group move in flight (the loads are moving), or anything pending that restarts or rescales the run (an
 * upgrade, a parallelism change, a stop-with-savepoint, a requested restore) makes it skip the look, since figures read
 * before that change describe a job about to be another. Unlike the partitioner, one process is enough: it may scale
 * out of it (a restart then, as live needs two processes on both sides).
 */
export function autoscalerEligibility(d: Deployment, latestRun: DeploymentRun | null, moveInFlight: KeyGroupMove | null): AutoscalerEligibility {
  if (d.autoscalerMode === 'off') return { ok: false, why: 'the autoscaler is off for this deployment' };
  if (d.status !== 'RUNNING' || d.desiredState !== 'RUNNING') return { ok: false, why: `the deployment is ${d.status} (desired ${d.desiredState})` };
  if (d.rescale && RESCALE_IN_FLIGHT.includes(d.rescale.state)) return { ok: false, why: `live rescale ${d.rescale.rescaleId} is in flight` };
  const pending = d.pendingUpgrade ? 'an upgrade' : d.pendingParallelism ? 'a parallelism change' : d.pendingStop ? 'a stop-with-savepoint' : d.pendingRestore?.origin === 'requested' ? 'a restore' : null;
  if (pending) return { ok: false, why: `${pending} is pending` };
  if (moveInFlight) return { ok: false, why: `key-group move ${moveInFlight.moveId} is in flight` };
  const run = latestRun;
  if (!run || run.runNo !== d.runNo || run.endedAt || !run.runningAt) return { ok: false, why: `run ${d.runNo} is not running` };
  return { ok: true, run };
}

/**
 * When the deployment last changed shape, for the cool-down: the latest live rescale's end (DONE, FAILED or FELL_BACK:
 * each moved key groups or restarted), or the run's start (a restart, a restore, a recovery), whichever is later.
 */
export function lastChangeAtMs(d: Deployment, run: DeploymentRun): number | null {
  const times = [d.rescale?.finishedAt?.getTime() ?? null, run.runningAt?.getTime() ?? null].filter((t): t is number => t !== null);
  return times.length ? Math.max(...times) : null;
}

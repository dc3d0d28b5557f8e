import { RESCALE_IN_FLIGHT, type Deployment, type DeploymentRun } from '../deployments/deployment';
import type { KeyGroupMove } from '../moves/key-group-move';

export type Eligibility = { readonly ok: true; readonly run: DeploymentRun } | { readonly ok: false; readonly why: string };

/**
 * Whether the partitioner may plan the deployment now, and on which run. Live moves work only between processes
 * (over the Kafka exchange), and one change at a time: a move in flight, a live rescale, or anything that is about to
 * restart the run (an upgrade, a parallelism change, a stop-with-savepoint, a requested restore) makes it wait a turn,
 * since a decision planned on the routing before that change would be stale by the time it could be made.
 */
export function partitionerEligibility(d: Deployment, latestRun: DeploymentRun | null, moveInFlight: KeyGroupMove | null): Eligibility {
  if (d.partitionerMode === 'off') return { ok: false, why: 'the partitioner is off for this deployment' };
  if (d.status !== 'RUNNING' || d.desiredState !== 'RUNNING') return { ok: false, why: `the deployment is ${d.status} (desired ${d.desiredState})` };
  if (d.rescale && RESCALE_IN_FLIGHT.includes(d.rescale.state)) return { ok: false, why: `live rescale ${d.rescale.rescaleId} is in flight` };
  const restart = d.pendingUpgrade ? 'an upgrade' : d.pendingParallelism ? 'a parallelism change' : d.pendingStop ? 'a stop-with-savepoint' : d.pendingRestore?.origin === 'requested' ? 'a restore' : null;
  if (restart) return { ok: false, why: `${restart} is pending` };
  if (moveInFlight) return { ok: false, why: `key-group move ${moveInFlight.moveId} is in flight` };
  const run = latestRun;
  if (!run || run.runNo !== d.runNo || run.endedAt || !run.runningAt) return { ok: false, why: `run ${d.runNo} is not running` };
  if (run.processes.length < 2) return { ok: false, why: `run ${run.runNo} is in one process: key groups move live only between processes` };
  return { ok: true, run };
}

import type { RescaleReport } from '@weir/protocol';
import type { Parallelism, Routing, RunProcessLayout, SubtaskAssignment } from '../deployments/deployment';
import { planRouting, routingOfRun } from './routing';
import { planProcesses, planSubtasks, runParallelism, type PlacementBundle, type ProcessPlan } from './subtask-plan';

/**
 * The arithmetic of a live rescale: which processes join, what the run's command says of its shape, and the layout a
 * worker's RescaleReport leaves. Pure functions, no I/O, like routing.ts; the reconciler's live-rescale driver does
 * the rest.
 */

/** A run as a live rescale sees it: its layout, every subtask (at the widths it runs now), and its routing. */
export interface RescaledRun {
  readonly processes: readonly RunProcessLayout[];
  readonly subtasks: readonly SubtaskAssignment[];
  readonly routing: Routing | null;
}

/**
 * Why a parallelism change cannot be made live, as far as the control plane can tell, or null. Key groups move live
 * between processes of a run over the Kafka exchange; a run in one process has none (its keyed edges are in memory),
 * and a change down to one process would leave one. What only the worker knows (a keyed operator feeding another
 * keyBy, fewer processes than a source's subtasks) it refuses, and the reconciler restarts then.
 */
export function liveRescaleRefusal(fromProcesses: number, toProcesses: number): string | null {
  if (fromProcesses < 2) return 'the run is in one process (key groups move live only between processes)';
  if (toProcesses < 2) return 'the new parallelism runs in one process (key groups move live only between processes)';
  return null;
}

/**
 * The processes that join a run rescaled to `to`: those from the run's process count up, planned at the new
 * parallelism (slot sharing as planProcesses has it) with the run's routing now, which gives them no key groups: its
 * owners are all below the old widths, and process 0 moves key groups to the joiners once they are in.
 */
export function joinerPlans(bundle: PlacementBundle, run: RescaledRun, to: Parallelism): ProcessPlan[] {
  return planProcesses(bundle, to, routingOfRun(run, bundle)).filter((p) => p.index >= run.processes.length);
}

/** Subtasks per operator of the run once rescaled to `to` (rescale-run's and the joiners' `parallelism`). */
export function rescaledParallelism(bundle: PlacementBundle, to: Parallelism): Record<string, number> {
  return runParallelism(planSubtasks(bundle, to));
}

/** The run once rescaled: its processes (the retirees gone), every subtask, its routing, and the retirees to stop. */
export interface RescaledLayout {
  readonly processes: RunProcessLayout[];
  readonly subtasks: SubtaskAssignment[];
  readonly routing: Routing;
  readonly retirees: RunProcessLayout[];
}

/**
 * The layout a RescaleReport leaves: each operator at the report's width (sources keep theirs; an operator the report
 * does not name keeps the run's), the keyed operators' key groups where the report says they are now, the others'
 * as before (or contiguous where their width changed), processes as planProcesses deals them, each on the worker it
 * ran on (joiners included). A string says why the report cannot be this run's layout.
 */
export function layoutAfterRescale(bundle: PlacementBundle, run: RescaledRun, report: RescaleReport): RescaledLayout | string {
  if (report.processes > run.processes.length) return `it names ${report.processes} processes, and the run has ${run.processes.length}`;
  const before = runParallelism(run.subtasks);
  const widths: Record<string, number> = {};
  for (const operatorId of bundle.operatorIds) widths[operatorId] = report.parallelism[operatorId] ?? before[operatorId] ?? 1;
  const parallelism: Parallelism = { default: 1, operators: widths };
  const planned = planRouting(bundle, parallelism, { routing: routingOfRun(run, bundle), parallelism: before });
  const routing: Record<string, readonly number[]> = { ...planned };
  for (const [operatorId, owners] of Object.entries(report.routing)) {
    if (!(operatorId in widths)) return `it routes operator "${operatorId}", which the bundle does not have`;
    if (owners.length !== bundle.maxParallelism) return `it routes ${owners.length} key groups of "${operatorId}", not ${bundle.maxParallelism}`;
    const stray = owners.findIndex((o) => o >= widths[operatorId]);
    if (stray >= 0) return `it gives key group ${stray} of "${operatorId}" to subtask ${owners[stray]}, beyond its ${widths[operatorId]} subtasks`;
    routing[operatorId] = [...owners];
  }
  const plans = planProcesses(bundle, parallelism, routing);
  if (plans.length !== report.processes) return `its parallelism runs in ${plans.length} processes, and it names ${report.processes}`;
  const processes = plans.map((p) => ({ ...run.processes[p.index], subtasks: [...p.subtasks] }));
  return { processes, subtasks: plans.flatMap((p) => p.subtasks), routing, retirees: run.processes.slice(report.processes) };
}

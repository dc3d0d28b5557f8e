import { keyGroupRangeFor } from '@weir/engine';
import type { Parallelism, Routing, SubtaskAssignment } from '../deployments/deployment';
import { routedAssignments } from './routing';

/** What placement needs from a bundle: where it is, and the shape of its job. */
export interface PlacementBundle {
  readonly id: string;
  /** Blob key (under tenants/<tenantId>/) and the sha256 the worker verifies. */
  readonly key: string;
  readonly sha256: string;
  /** The job's stage operator ids, from the manifest. */
  readonly operatorIds: readonly string[];
  readonly maxParallelism: number;
}

export function parallelismOf(parallelism: Parallelism, operatorId: string): number {
  return parallelism.operators[operatorId] ?? parallelism.default;
}

/**
 * Every subtask of every operator, each keyed operator's subtask with its contiguous key-group range (Flink's
 * assignment, so a later rescale moves whole ranges). The manifest does not say which operators are keyed, so
 * every operator gets its range; the engine ignores ranges on unkeyed ones.
 */
export function planSubtasks(bundle: PlacementBundle, parallelism: Parallelism): SubtaskAssignment[] {
  const out: SubtaskAssignment[] = [];
  for (const operatorId of bundle.operatorIds) {
    const p = parallelismOf(parallelism, operatorId);
    for (let subtask = 0; subtask < p; subtask++) {
      const { start, end } = keyGroupRangeFor(subtask, p, bundle.maxParallelism);
      out.push({ operatorId, subtask, keyGroups: end >= start ? [[start, end]] : [] });
    }
  }
  return out;
}

/**
 * Slots a run holds: one per job host process, and a run has as many processes as its widest operator has subtasks
 * (planProcesses). Operators share a process's thread of work as Flink's slot sharing has them share a slot, so the
 * widest stage is what a job costs; counting every operator would make a five-operator job at parallelism 1 need
 * five slots.
 */
export function slotsFor(bundle: PlacementBundle, parallelism: Parallelism): number {
  return Math.max(1, ...bundle.operatorIds.map((id) => parallelismOf(parallelism, id)));
}

/** The subtasks one job host process of a run is given. */
export interface ProcessPlan {
  readonly index: number;
  readonly subtasks: readonly SubtaskAssignment[];
}

/**
 * A run's processes, one per slot (slotsFor of them): process i runs subtask i of every operator whose parallelism
 * exceeds i (Flink-style slot sharing), each with its key groups: those `routing` gives it (what live moves left),
 * else its contiguous range from planSubtasks. So every process holds at most one subtask of each operator, process
 * 0 holds one of every operator, and the processes together hold every subtask once.
 */
export function planProcesses(bundle: PlacementBundle, parallelism: Parallelism, routing?: Routing): ProcessPlan[] {
  const planned = planSubtasks(bundle, parallelism);
  const subtasks = routing ? routedAssignments(planned, routing) : planned;
  return Array.from({ length: slotsFor(bundle, parallelism) }, (_, index) => ({ index, subtasks: subtasks.filter((s) => s.subtask === index) }));
}

/**
 * Subtasks per operator across a whole run (run-subtasks' `parallelism`: every process plans the job's full shape),
 * read back from the run's subtasks, so a run's command says what its row says.
 */
export function runParallelism(subtasks: readonly Pick<SubtaskAssignment, 'operatorId' | 'subtask'>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of subtasks) out[s.operatorId] = Math.max(out[s.operatorId] ?? 0, s.subtask + 1);
  return out;
}

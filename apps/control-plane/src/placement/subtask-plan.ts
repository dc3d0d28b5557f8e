import { keyGroupRangeFor } from '@weir/engine';
import type { Parallelism, SubtaskAssignment } from '../deployments/deployment';

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
 * Slots a run holds on its worker: one per subtask of its widest operator. The worker runs a whole job in one
 * child process, and operators chained in it share their subtask's thread of work, so the widest stage is what
 * a job costs; counting every operator would make a five-operator job at parallelism 1 need five slots.
 */
export function slotsFor(bundle: PlacementBundle, parallelism: Parallelism): number {
  return Math.max(1, ...bundle.operatorIds.map((id) => parallelismOf(parallelism, id)));
}

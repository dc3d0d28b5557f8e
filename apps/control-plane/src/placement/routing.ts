import { defaultOwnerOf } from '@weir/engine';
import type { Parallelism, Routing, SubtaskAssignment } from '../deployments/deployment';

/**
 * A run's routing: per operator, the subtask owning each key group (index = key group), as run-subtasks carries it
 * and deployment_runs.routing records it. It starts as Flink's contiguous ranges and changes only by live moves;
 * pure functions, no I/O, like libs/engine's key-groups.ts. The manifest does not say which operators are keyed, so
 * every operator gets a routing; the engine reads it for keyed stages only.
 */

/** Contiguous ranges: key group kg belongs to floor(kg × parallelism / maxParallelism) (Flink's assignment). */
export function contiguousOwners(parallelism: number, maxParallelism: number): number[] {
  return Array.from({ length: maxParallelism }, (_, kg) => defaultOwnerOf(kg, parallelism, maxParallelism));
}

/** What a previous run leaves the next one: its routing and each operator's subtask count. */
export interface PreviousRouting {
  readonly routing: Routing;
  readonly parallelism: Readonly<Record<string, number>>;
}

/**
 * The routing of a run about to be placed. An operator keeps the previous run's owners (the moves made so far) when
 * its parallelism and the key-group count are what they were; otherwise it starts again from contiguous ranges,
 * since a rescale by restart re-plans that operator (owners of another width mean nothing at this one).
 */
export function planRouting(
  bundle: { readonly operatorIds: readonly string[]; readonly maxParallelism: number },
  parallelism: Parallelism,
  previous: PreviousRouting | null,
): Routing {
  const out: Record<string, number[]> = {};
  for (const operatorId of bundle.operatorIds) {
    const p = parallelism.operators[operatorId] ?? parallelism.default;
    const kept = previous?.routing[operatorId];
    const same = kept && kept.length === bundle.maxParallelism && previous.parallelism[operatorId] === p && kept.every((s) => Number.isInteger(s) && s >= 0 && s < p);
    out[operatorId] = same ? [...kept] : contiguousOwners(p, bundle.maxParallelism);
  }
  return out;
}

/** The routing after key groups of one operator moved (a new object; the operator must be in the routing). */
export function applyMoves(routing: Routing, operatorId: string, moved: readonly { readonly keyGroup: number; readonly toSubtask: number }[]): Routing {
  const owners = routing[operatorId];
  if (!owners) throw new RoutingArgumentError(`the routing has no operator "${operatorId}"`);
  const next = [...owners];
  for (const { keyGroup, toSubtask } of moved) {
    if (!Number.isInteger(keyGroup) || keyGroup < 0 || keyGroup >= next.length) throw new RoutingArgumentError(`key group ${keyGroup} is outside 0..${next.length - 1}`);
    next[keyGroup] = toSubtask;
  }
  return { ...routing, [operatorId]: next };
}

/** The key groups a subtask owns, as the fewest inclusive ranges in ascending order. */
export function keyGroupRanges(owners: readonly number[], subtask: number): [number, number][] {
  const ranges: [number, number][] = [];
  for (let kg = 0; kg < owners.length; kg++) {
    if (owners[kg] !== subtask) continue;
    const last = ranges[ranges.length - 1];
    if (last && last[1] === kg - 1) last[1] = kg;
    else ranges.push([kg, kg]);
  }
  return ranges;
}

/** Subtasks with the key groups the routing gives them (operators the routing lacks keep theirs). */
export function routedAssignments(subtasks: readonly SubtaskAssignment[], routing: Routing): SubtaskAssignment[] {
  return subtasks.map((s) => {
    const owners = routing[s.operatorId];
    return owners ? { operatorId: s.operatorId, subtask: s.subtask, keyGroups: keyGroupRanges(owners, s.subtask) } : s;
  });
}

/**
 * The owners one operator's subtasks hold by their key-group ranges (a run recorded before routings were: its ranges
 * are its routing); null when the ranges do not cover every key group exactly once.
 */
export function ownersFromAssignments(subtasks: readonly SubtaskAssignment[], operatorId: string, maxParallelism: number): number[] | null {
  const owners = new Array<number>(maxParallelism).fill(-1);
  for (const s of subtasks) {
    if (s.operatorId !== operatorId) continue;
    for (const [start, end] of s.keyGroups) {
      for (let kg = start; kg <= end; kg++) {
        if (kg >= maxParallelism || owners[kg] !== -1) return null;
        owners[kg] = s.subtask;
      }
    }
  }
  return owners.includes(-1) ? null : owners;
}

/**
 * A run's routing as recorded, or for a run placed before routings were recorded, the owners its subtasks' ranges
 * give (contiguous ranges, which is what its engine ran with).
 */
export function routingOfRun(
  run: { readonly routing: Routing | null; readonly subtasks: readonly SubtaskAssignment[] },
  bundle: { readonly operatorIds: readonly string[]; readonly maxParallelism: number },
): Routing {
  if (run.routing) return run.routing;
  const out: Record<string, number[]> = {};
  for (const operatorId of bundle.operatorIds) {
    const width = Math.max(1, ...run.subtasks.filter((s) => s.operatorId === operatorId).map((s) => s.subtask + 1));
    out[operatorId] = ownersFromAssignments(run.subtasks, operatorId, bundle.maxParallelism) ?? contiguousOwners(width, bundle.maxParallelism);
  }
  return out;
}

export class RoutingArgumentError extends Error {
  override readonly name = 'RoutingArgumentError';
}

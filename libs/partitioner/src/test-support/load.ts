/** Test-only builders of layouts and load models, so specs state loads in records/s and nothing else. */
import type { PartitionLayout, SplitAssignment } from '../layout';
import type { KeyLoad, LoadModel } from '../load-model';

/** Contiguous ranges of `maxParallelism` key groups over n subtasks (the engine's default owners). */
export function rangeOwners(n: number, maxParallelism: number): number[] {
  return Array.from({ length: maxParallelism }, (_, kg) => Math.floor((kg * n) / maxParallelism));
}

export function layoutOf(n: number, owners: readonly number[], splits: readonly SplitAssignment[] = []): PartitionLayout {
  return { subtasks: n, owners: [...owners], splits: [...splits] };
}

export function modelOf(
  keyGroupRates: readonly number[],
  n: number,
  keys: readonly Omit<KeyLoad, 'error'>[] = [],
  extra: { capacities?: (number | null)[]; stateBytes?: number[] } = {},
): LoadModel {
  return {
    keyGroupRates: [...keyGroupRates],
    keyRates: keys.map((k) => ({ ...k, error: 0 })).sort((a, b) => b.rate - a.rate),
    capacities: extra.capacities ?? new Array<number | null>(n).fill(null),
    stateBytes: extra.stateBytes ?? new Array<number>(keyGroupRates.length).fill(0),
  };
}

/** Per-subtask load of a layout when every key group carries its rate to its owner (no splits). */
export function loadsOf(owners: readonly number[], rates: readonly number[], n: number): number[] {
  const loads = new Array<number>(n).fill(0);
  owners.forEach((owner, kg) => (loads[owner] += rates[kg]));
  return loads;
}

/**
 * The load model the planner decides on, in records per second: every key group's rate, the heavy keys' rates, each
 * subtask's true processing rate (records ÷ busy time, as DS2 measures it: what it could do if never idle) and each
 * key group's state bytes (what a move costs). `loadModelFromSnapshots` builds it from what subtasks already report
 * (libs/metrics): exact key-group counts and the heavy-hitters sketch.
 */
import { mergeHeavyKeysOfOperator, type SubtaskMetricsSnapshot } from '@weir/metrics';
import { PartitionerInputError } from './errors';
import { splitId, type PartitionLayout } from './layout';

/** One heavy key's rate; `error` bounds how much of it may be the sketch's overestimate (records/s). */
export interface KeyLoad {
  readonly key: string;
  readonly keyGroup: number;
  readonly rate: number;
  readonly error: number;
}

export interface LoadModel {
  /** key group → records/s over all subtasks; its length is the max parallelism. */
  readonly keyGroupRates: readonly number[];
  /** Heavy keys, highest rate first; every split key of the layout is listed when it had records. */
  readonly keyRates: readonly KeyLoad[];
  /** subtask → records/s it can process when busy all the time; null where not measured (the others' mean is used). */
  readonly capacities: readonly (number | null)[];
  /** key group → state bytes (0 where unknown). */
  readonly stateBytes: readonly number[];
}

export interface SnapshotLoadOptions {
  /** Heavy keys kept after merging the subtasks' lists. */
  readonly heavyKeys?: number;
  /** key group → state bytes (e.g. from the latest checkpoint's per-key-group sizes). */
  readonly stateBytes?: readonly number[];
  /** A subtask busy less than this share of its interval has no measured capacity (too little to divide by). */
  readonly minBusyShare?: number;
}

const DEFAULT_HEAVY_KEYS = 64;
const DEFAULT_MIN_BUSY_SHARE = 0.05;
/**
 * A split key's rate is read from its key group's exact counts on subtasks that do not own the key group (only the
 * split key goes there) when at least this share of it is routed there; below, its sampled sketch estimate is used.
 */
const MIN_EXACT_SHARE = 0.2;

/**
 * The load model of one keyed operator from one interval's snapshots of its subtasks, routed by `layout`.
 * Key-group rates are exact (every record is counted); heavy keys come from the sketch (sampled past its exact
 * prefix); a split key's rate is recovered exactly from the counts of the subtasks it was spread to.
 */
export function loadModelFromSnapshots(snapshots: readonly SubtaskMetricsSnapshot[], layout: PartitionLayout, options: SnapshotLoadOptions = {}): LoadModel {
  const maxParallelism = layout.owners.length;
  const perSubtask: Float64Array[] = Array.from({ length: layout.subtasks }, () => new Float64Array(maxParallelism));
  const keyGroupRates = new Array<number>(maxParallelism).fill(0);
  const capacities = new Array<number | null>(layout.subtasks).fill(null);
  const minBusy = (options.minBusyShare ?? DEFAULT_MIN_BUSY_SHARE) * 1000;
  for (const snapshot of snapshots) {
    if (!Number.isInteger(snapshot.subtask) || snapshot.subtask < 0 || snapshot.subtask >= layout.subtasks) {
      throw new PartitionerInputError(`a snapshot of subtask ${snapshot.subtask} does not belong to an operator of ${layout.subtasks} subtasks`);
    }
    const seconds = (snapshot.toMs - snapshot.fromMs) / 1000;
    if (!(seconds > 0)) throw new PartitionerInputError(`subtask ${snapshot.subtask}'s snapshot covers ${seconds * 1000} ms`);
    for (const [group, count] of Object.entries(snapshot.keyGroupCounts)) {
      const kg = Number(group);
      if (kg >= maxParallelism) throw new PartitionerInputError(`subtask ${snapshot.subtask} counted key group ${kg}, outside [0, ${maxParallelism})`);
      perSubtask[snapshot.subtask][kg] += count / seconds;
      keyGroupRates[kg] += count / seconds;
    }
    if (snapshot.busyMsPerSec >= minBusy) capacities[snapshot.subtask] = snapshot.recordsInPerSec / (snapshot.busyMsPerSec / 1000);
  }

  const secondsOf = new Map(snapshots.map((s) => [s.subtask, (s.toMs - s.fromMs) / 1000]));
  const merged = mergeHeavyKeysOfOperator(snapshots, options.heavyKeys ?? DEFAULT_HEAVY_KEYS);
  // The merged counts are per interval; intervals of one operator's subtasks are the same length in practice.
  const meanSeconds = [...secondsOf.values()].reduce((a, s) => a + s, 0) / Math.max(1, secondsOf.size);
  const keyRates = new Map<string, KeyLoad>();
  for (const heavy of merged) {
    keyRates.set(splitId(heavy), { key: heavy.key, keyGroup: heavy.keyGroup, rate: heavy.count / meanSeconds, error: heavy.error / meanSeconds });
  }
  const splitsPerGroup = new Map<number, number>();
  for (const split of layout.splits) splitsPerGroup.set(split.keyGroup, (splitsPerGroup.get(split.keyGroup) ?? 0) + 1);
  for (const split of layout.splits) {
    const owner = layout.owners[split.keyGroup];
    const at = split.subtasks.indexOf(owner);
    const elsewhere = 1 - (at === -1 ? 0 : split.weights[at]);
    if (splitsPerGroup.get(split.keyGroup) !== 1 || elsewhere < MIN_EXACT_SHARE) continue;
    let routedElsewhere = 0;
    for (const s of split.subtasks) if (s !== owner) routedElsewhere += perSubtask[s][split.keyGroup];
    keyRates.set(splitId(split), { key: split.key, keyGroup: split.keyGroup, rate: routedElsewhere / elsewhere, error: 0 });
  }
  const ordered = [...keyRates.values()].sort((a, b) => b.rate - a.rate || a.keyGroup - b.keyGroup || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const stateBytes = options.stateBytes ? [...options.stateBytes] : new Array<number>(maxParallelism).fill(0);
  if (stateBytes.length !== maxParallelism) throw new PartitionerInputError(`stateBytes has ${stateBytes.length} entries for ${maxParallelism} key groups`);
  return { keyGroupRates, keyRates: ordered, capacities, stateBytes };
}

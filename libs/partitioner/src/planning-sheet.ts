/**
 * The planner's working copy of one operator: who owns each key group, which keys are split and how, and the load
 * every subtask would carry. Each planning step (fold-backs, splits, moves) edits it, and the loads follow each
 * edit at once, so the next step decides on the layout as it stands so far. Internal to the planner.
 */
import { PartitionerInputError } from './errors';
import { splitId, type PartitionLayout } from './layout';
import type { LoadModel } from './load-model';

export interface WorkingSplit {
  readonly key: string;
  readonly keyGroup: number;
  /** The key's rate (records/s); its key group's other keys are the group's residual. */
  readonly rate: number;
  subtasks: number[];
  weights: number[];
  /** As in the layout planned from; null for a split this plan adds. */
  readonly previous: { readonly subtasks: readonly number[]; readonly weights: readonly number[] } | null;
}

export class PlanningSheet {
  readonly subtasks: number;
  readonly owners: Int32Array;
  /** key group → records/s that follow its owner (its rate minus its split keys'). */
  readonly residual: Float64Array;
  /** key group → split keys in it. Such a key group stays where it is: its state holds one of the partials. */
  readonly splitKeys: Int32Array;
  readonly loads: Float64Array;
  /** subtask → its share of the total load, in proportion to its capacity. */
  readonly fair: Float64Array;
  readonly total: number;
  readonly splits: WorkingSplit[] = [];

  constructor(
    layout: PartitionLayout,
    readonly model: LoadModel,
  ) {
    const maxParallelism = layout.owners.length;
    if (model.keyGroupRates.length !== maxParallelism) {
      throw new PartitionerInputError(`the load model has ${model.keyGroupRates.length} key groups, the layout ${maxParallelism}`);
    }
    if (model.capacities.length !== layout.subtasks) {
      throw new PartitionerInputError(`the load model has capacities of ${model.capacities.length} subtasks, the layout ${layout.subtasks}`);
    }
    this.subtasks = layout.subtasks;
    this.owners = Int32Array.from(layout.owners);
    this.residual = Float64Array.from(model.keyGroupRates, (r) => (r > 0 ? r : 0));
    this.splitKeys = new Int32Array(maxParallelism);
    this.loads = new Float64Array(layout.subtasks);
    this.total = this.residual.reduce((a, r) => a + r, 0);
    this.fair = fairLoads(this.total, model.capacities);
    for (let kg = 0; kg < maxParallelism; kg++) this.loads[this.owners[kg]] += this.residual[kg];
    const rates = new Map(model.keyRates.map((k) => [splitId(k), k.rate]));
    for (const split of layout.splits) {
      this.addSplit(split.key, split.keyGroup, rates.get(splitId(split)) ?? 0, [...split.subtasks], [...split.weights], {
        subtasks: split.subtasks,
        weights: split.weights,
      });
    }
  }

  get maxParallelism(): number {
    return this.owners.length;
  }

  /** The mean fair load: what one subtask carries when the operator is perfectly balanced. */
  get meanFair(): number {
    return this.total / this.subtasks;
  }

  utilization(subtask: number): number {
    return this.fair[subtask] > 0 ? this.loads[subtask] / this.fair[subtask] : 0;
  }

  /** max over subtasks of load ÷ fair load; 1 when there is no load at all. */
  imbalance(): number {
    if (!(this.total > 0)) return 1;
    let max = 0;
    for (let s = 0; s < this.subtasks; s++) max = Math.max(max, this.utilization(s));
    return max;
  }

  /** The most loaded subtask relative to its fair share (the lowest index among equals). */
  hottest(): number {
    let best = 0;
    for (let s = 1; s < this.subtasks; s++) if (this.utilization(s) > this.utilization(best)) best = s;
    return best;
  }

  moveKeyGroup(keyGroup: number, to: number): void {
    const rate = this.residual[keyGroup];
    this.loads[this.owners[keyGroup]] -= rate;
    this.loads[to] += rate;
    this.owners[keyGroup] = to;
  }

  /** Takes `rate` of the key group's residual and spreads it by `weights` (clamped to what the group carries). */
  addSplit(key: string, keyGroup: number, rate: number, subtasks: number[], weights: number[], previous: WorkingSplit['previous']): WorkingSplit {
    const taken = Math.max(0, Math.min(rate, this.residual[keyGroup]));
    this.residual[keyGroup] -= taken;
    this.loads[this.owners[keyGroup]] -= taken;
    const split: WorkingSplit = { key, keyGroup, rate: taken, subtasks, weights, previous };
    this.spread(split, 1);
    this.splits.push(split);
    this.splitKeys[keyGroup]++;
    return split;
  }

  setWeights(split: WorkingSplit, subtasks: number[], weights: number[]): void {
    this.spread(split, -1);
    split.subtasks = subtasks;
    split.weights = weights;
    this.spread(split, 1);
  }

  /** The key goes back whole to its key group's owner. */
  removeSplit(split: WorkingSplit): void {
    this.spread(split, -1);
    this.residual[split.keyGroup] += split.rate;
    this.loads[this.owners[split.keyGroup]] += split.rate;
    this.splits.splice(this.splits.indexOf(split), 1);
    this.splitKeys[split.keyGroup]--;
  }

  /** The subtask's load without this split's part on it. */
  loadWithout(split: WorkingSplit, subtask: number): number {
    const at = split.subtasks.indexOf(subtask);
    return this.loads[subtask] - (at === -1 ? 0 : split.rate * split.weights[at]);
  }

  private spread(split: WorkingSplit, sign: 1 | -1): void {
    split.subtasks.forEach((s, i) => (this.loads[s] += sign * split.rate * split.weights[i]));
  }
}

/** Unmeasured capacities take the mean of the measured ones (all equal when none is measured). */
function fairLoads(total: number, capacities: readonly (number | null)[]): Float64Array {
  const known = capacities.filter((c): c is number => c !== null && c > 0);
  const fallback = known.length > 0 ? known.reduce((a, c) => a + c, 0) / known.length : 1;
  const caps = capacities.map((c) => (c !== null && c > 0 ? c : fallback));
  const sum = caps.reduce((a, c) => a + c, 0);
  return Float64Array.from(caps, (c) => (total * c) / sum);
}

/**
 * Where a keyed operator's records go: every key group has one owning subtask, and a few hot keys are split over
 * several subtasks with weights. This is what a decision changes and what the split router is built from; it is
 * plain data so the engine can store it beside a checkpoint and the control plane beside the decision.
 */
import { PartitionerInputError } from './errors';

/** One hot key routed to several subtasks: `weights[i]` of its records go to `subtasks[i]`. */
export interface SplitAssignment {
  /** The key as the heavy-hitters sketch names it (`HeavyKey.key`: the engine offers `String(record key)`). */
  readonly key: string;
  readonly keyGroup: number;
  readonly subtasks: readonly number[];
  /** Non-negative, one per subtask, summing to 1. */
  readonly weights: readonly number[];
}

export interface PartitionLayout {
  /** The operator's subtask count n. */
  readonly subtasks: number;
  /** key group → owning subtask; its length is the max parallelism. */
  readonly owners: readonly number[];
  readonly splits: readonly SplitAssignment[];
}

/** A split's identity: the sketch's key string alone is not unique across key groups (see printableKey). */
export function splitId(split: { readonly key: string; readonly keyGroup: number }): string {
  return `${split.keyGroup}\u0000${split.key}`;
}

/** Throws PartitionerInputError naming the first field that breaks the layout's invariants. */
export function checkLayout(layout: PartitionLayout): void {
  const { subtasks, owners, splits } = layout;
  if (!Number.isInteger(subtasks) || subtasks < 1) throw new PartitionerInputError(`subtasks must be a positive integer, got ${subtasks}`);
  if (owners.length < subtasks) throw new PartitionerInputError(`${owners.length} key groups cannot be spread over ${subtasks} subtasks`);
  owners.forEach((owner, keyGroup) => {
    if (!Number.isInteger(owner) || owner < 0 || owner >= subtasks) {
      throw new PartitionerInputError(`key group ${keyGroup} is owned by subtask ${owner}, outside [0, ${subtasks})`);
    }
  });
  const seen = new Set<string>();
  for (const split of splits) {
    const name = `split key "${split.key}" (key group ${split.keyGroup})`;
    if (seen.has(splitId(split))) throw new PartitionerInputError(`${name} is listed twice`);
    seen.add(splitId(split));
    if (!Number.isInteger(split.keyGroup) || split.keyGroup < 0 || split.keyGroup >= owners.length) {
      throw new PartitionerInputError(`${name}: key group outside [0, ${owners.length})`);
    }
    if (split.subtasks.length === 0 || split.subtasks.length !== split.weights.length) {
      throw new PartitionerInputError(`${name}: needs one weight per subtask, got ${split.subtasks.length} subtasks and ${split.weights.length} weights`);
    }
    if (new Set(split.subtasks).size !== split.subtasks.length || split.subtasks.some((s) => !Number.isInteger(s) || s < 0 || s >= subtasks)) {
      throw new PartitionerInputError(`${name}: subtasks [${split.subtasks.join(', ')}] must be distinct and in [0, ${subtasks})`);
    }
    const sum = split.weights.reduce((a, w) => a + w, 0);
    if (split.weights.some((w) => !(w >= 0)) || Math.abs(sum - 1) > 1e-6) {
      throw new PartitionerInputError(`${name}: weights [${split.weights.join(', ')}] must be ≥ 0 and sum to 1`);
    }
  }
}

/** The layout every key group starts from: the owners given, nothing split. */
export function unsplitLayout(subtasks: number, owners: readonly number[]): PartitionLayout {
  const layout = { subtasks, owners: [...owners], splits: [] };
  checkLayout(layout);
  return layout;
}

/**
 * How eagerly the partitioner acts. The two imbalance thresholds are the hysteresis band: a decision is taken only
 * when the predicted imbalance is above `actAbove`, and then it plans until it is at or below `aimBelow`, so a job
 * that hovers around one threshold is not replanned on every interval. Every action also waits out `coolDownMs`
 * on its key group, so a key group never goes back and forth between two subtasks.
 */
import { PartitionerInputError } from './errors';

export interface PartitioningPolicy {
  /** Act only when max ÷ fair subtask load is above this (1.1: a subtask 10% above its share). */
  readonly actAbove: number;
  /** Once acting, plan until max ÷ fair load is at or below this. At least 1, at most `actAbove`. */
  readonly aimBelow: number;
  /** Key-group moves per decision: each one pauses its key group, so a decision moves a few, never the job. */
  readonly maxKeyGroupMoves: number;
  /** State bytes moved per decision (the sum over the moves' key groups). */
  readonly maxMoveBytes: number;
  /** A key group that moved, split or folded back within this many ms is left where it is. */
  readonly coolDownMs: number;
  /**
   * A split key folds back to its key group's owner once its rate is below this fraction of a subtask's fair load:
   * well below the split threshold (a key group above the aim on its own), so a key does not flap.
   */
  readonly foldBackBelow: number;
  /**
   * The fraction of a subtask's aim one part of a split key is sized for. Below 1, the subtasks that take a part keep
   * room for other key groups, so fewer moves are needed around them, for a slightly larger k.
   */
  readonly splitFill: number;
}

export const DEFAULT_PARTITIONING_POLICY: PartitioningPolicy = Object.freeze({
  actAbove: 1.1,
  aimBelow: 1.05,
  maxKeyGroupMoves: 16,
  maxMoveBytes: 512 * 1024 * 1024,
  coolDownMs: 5 * 60_000,
  foldBackBelow: 0.5,
  splitFill: 0.85,
});

/** The defaults overridden by `overrides`, checked. */
export function partitioningPolicy(overrides: Partial<PartitioningPolicy> = {}): PartitioningPolicy {
  const policy = { ...DEFAULT_PARTITIONING_POLICY, ...overrides };
  if (!(policy.aimBelow >= 1) || !(policy.actAbove >= policy.aimBelow)) {
    throw new PartitionerInputError(`the policy needs 1 ≤ aimBelow ≤ actAbove, got aimBelow=${policy.aimBelow}, actAbove=${policy.actAbove}`);
  }
  if (!Number.isInteger(policy.maxKeyGroupMoves) || policy.maxKeyGroupMoves < 0) {
    throw new PartitionerInputError(`maxKeyGroupMoves must be an integer ≥ 0, got ${policy.maxKeyGroupMoves}`);
  }
  if (!(policy.maxMoveBytes >= 0)) throw new PartitionerInputError(`maxMoveBytes must be ≥ 0, got ${policy.maxMoveBytes}`);
  if (!(policy.coolDownMs >= 0)) throw new PartitionerInputError(`coolDownMs must be ≥ 0, got ${policy.coolDownMs}`);
  if (!(policy.foldBackBelow >= 0 && policy.foldBackBelow < 1)) {
    throw new PartitionerInputError(`foldBackBelow must be in [0, 1), got ${policy.foldBackBelow}`);
  }
  if (!(policy.splitFill > 0 && policy.splitFill <= 1)) throw new PartitionerInputError(`splitFill must be in (0, 1], got ${policy.splitFill}`);
  return Object.freeze(policy);
}

/**
 * @weir/partitioner: what the dynamic partitioner decides for one keyed operator, and how records are routed once it
 * has. Pure code: no I/O, no clock of its own. The engine builds a `SplitRouter` from the current layout and calls
 * `route` per record; the controller builds a `LoadModel` from the subtasks' metrics snapshots, calls
 * `planPartitioning`, stores the decision, makes its moves (the engine's live moves) and applies it with
 * `applyDecision`. Design and figures: docs/partitioner.md.
 */
export { PartitionerInputError } from './errors';
export { DEFAULT_PARTITIONING_POLICY, partitioningPolicy, type PartitioningPolicy } from './policy';
export { checkLayout, splitId, unsplitLayout, type PartitionLayout, type SplitAssignment } from './layout';
export { loadModelFromSnapshots, type KeyLoad, type LoadModel, type SnapshotLoadOptions } from './load-model';
export type { DeclinedAction, DeclineReason, FoldBack, KeyGroupMove, KeySplit, PartitioningDecision } from './decision';
export { planPartitioning, type PartitioningInput } from './plan-partitioning';
export { applyDecision, changedKeyGroups } from './apply-decision';
export { SplitRouter } from './split-router';

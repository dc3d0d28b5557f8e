/**
 * A decision applied to the layout it was planned from: the layout the engine routes by once the decision's moves
 * have completed. Pure, so the control plane can show the layout a recommend-only decision would give.
 */
import type { PartitioningDecision } from './decision';
import { PartitionerInputError } from './errors';
import { checkLayout, splitId, type PartitionLayout, type SplitAssignment } from './layout';

export function applyDecision(layout: PartitionLayout, decision: PartitioningDecision): PartitionLayout {
  const owners = [...layout.owners];
  for (const move of decision.moves) {
    if (owners[move.keyGroup] !== move.fromSubtask) {
      throw new PartitionerInputError(`key group ${move.keyGroup} is owned by subtask ${owners[move.keyGroup]}, not ${move.fromSubtask}: the decision was planned from another layout`);
    }
    owners[move.keyGroup] = move.toSubtask;
  }
  const splits = new Map<string, SplitAssignment>(layout.splits.map((s) => [splitId(s), s]));
  for (const fold of decision.foldBacks) splits.delete(splitId(fold));
  for (const split of decision.splits) {
    splits.set(splitId(split), { key: split.key, keyGroup: split.keyGroup, subtasks: [...split.subtasks], weights: [...split.weights] });
  }
  const next: PartitionLayout = { subtasks: layout.subtasks, owners, splits: [...splits.values()] };
  checkLayout(next);
  return next;
}

/**
 * The key groups whose state a decision moves, splits or merges: the caller stamps them with the time it applied the
 * decision and passes them back as `lastChangedAtMs`, which is what the cool-down reads. A re-weight moves no state
 * and is not listed.
 */
export function changedKeyGroups(decision: PartitioningDecision): number[] {
  const changed = new Set<number>();
  for (const move of decision.moves) changed.add(move.keyGroup);
  for (const split of decision.splits) if (split.change !== 'reweight') changed.add(split.keyGroup);
  for (const fold of decision.foldBacks) changed.add(fold.keyGroup);
  return [...changed].sort((a, b) => a - b);
}

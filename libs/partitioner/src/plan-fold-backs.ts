/**
 * Fold-backs: a split key that has cooled (its rate below `foldBackBelow` × a subtask's fair load) goes back whole to
 * its key group's owner, where its partials merge. Every copy of a key's state costs memory and a merge downstream,
 * so a split lasts only while the key needs it. Runs before the hysteresis gate: folding back is housekeeping that a
 * balanced job does too.
 */
import type { DeclinedAction, FoldBack } from './decision';
import { coolingUntil, fmt, type PlanContext } from './plan-context';
import type { PlanningSheet } from './planning-sheet';

export function planFoldBacks(sheet: PlanningSheet, ctx: PlanContext): { foldBacks: FoldBack[]; declined: DeclinedAction[] } {
  const foldBacks: FoldBack[] = [];
  const declined: DeclinedAction[] = [];
  const foldBelowRate = ctx.policy.foldBackBelow * sheet.meanFair;
  for (const split of [...sheet.splits]) {
    if (split.previous === null || split.rate >= foldBelowRate) continue;
    const until = coolingUntil(ctx, split.keyGroup);
    const evidence = { keyRate: split.rate, foldBelowRate };
    if (until !== null) {
      declined.push({
        action: 'fold-back',
        reason: 'cool-down',
        key: split.key,
        keyGroup: split.keyGroup,
        detail: `key "${split.key}" cooled to ${fmt(split.rate)} records/s, but key group ${split.keyGroup} changed less than the cool-down ago`,
        evidence: { ...evidence, coolingUntilMs: until },
      });
      continue;
    }
    const toSubtask = sheet.owners[split.keyGroup];
    foldBacks.push({
      key: split.key,
      keyGroup: split.keyGroup,
      toSubtask,
      fromSubtasks: [...split.subtasks],
      reason: `key "${split.key}" cooled to ${fmt(split.rate)} records/s, below ${fmt(foldBelowRate)} (${ctx.policy.foldBackBelow} of a subtask's fair load): its partials merge at subtask ${toSubtask}, the owner of key group ${split.keyGroup}`,
      evidence,
    });
    sheet.removeSplit(split);
  }
  return { foldBacks, declined };
}

/**
 * Hot-key splits. Moving key groups cannot bring the most loaded subtask below the hottest key group's load, so a key
 * group that is above the aim on every subtask (aimBelow × its fair load) has its heaviest key split: routed to k
 * subtasks, k as small as lets each part fit within `splitFill` of a subtask's aim. The key group's owner is always
 * one of them (its partial stays where the key's state already is, and a fold-back merges there); the others are the
 * least loaded subtasks. A split key whose rate grew beyond its parts is widened the same way.
 */
import type { DeclinedAction } from './decision';
import { coolingUntil, fmt, type PlanContext } from './plan-context';
import type { PlanningSheet, WorkingSplit } from './planning-sheet';
import { splitId } from './layout';
import { waterFill } from './water-fill';

export function planSplits(sheet: PlanningSheet, ctx: PlanContext): DeclinedAction[] {
  const declined: DeclinedAction[] = [];
  const aimLoad = ctx.policy.aimBelow * sheet.meanFair;
  const pieceLoad = ctx.policy.splitFill * aimLoad;
  const foldBelowRate = ctx.policy.foldBackBelow * sheet.meanFair;
  let roomiest = 0;
  for (let s = 0; s < sheet.subtasks; s++) roomiest = Math.max(roomiest, ctx.policy.aimBelow * sheet.fair[s]);
  const split = new Map(sheet.splits.map((s) => [splitId(s), s]));
  for (const key of sheet.model.keyRates) {
    const existing = split.get(splitId(key));
    const until = coolingUntil(ctx, key.keyGroup);
    if (existing !== undefined) {
      const ways = Math.min(sheet.subtasks, Math.ceil(existing.rate / pieceLoad));
      if (ways <= existing.subtasks.length) continue;
      if (until !== null) {
        declined.push(coolingDown(key.key, key.keyGroup, until, `split key "${key.key}" needs ${ways} subtasks, has ${existing.subtasks.length}`, existing.rate));
        continue;
      }
      sheet.setWeights(existing, [...existing.subtasks, ...leastLoaded(sheet, existing.subtasks, ways - existing.subtasks.length)], evenly(ways));
      level(sheet, existing);
      continue;
    }
    const groupLoad = sheet.residual[key.keyGroup];
    // It fits whole on some subtask, or splitting it would leave a key too cool to stay split.
    if (groupLoad <= roomiest || key.rate <= foldBelowRate) continue;
    const evidence = { keyRate: key.rate, keyGroupRate: groupLoad, aimLoad, largestAim: roomiest };
    if (!ctx.splittable) {
      declined.push({
        action: 'split',
        reason: 'not-mergeable',
        key: key.key,
        keyGroup: key.keyGroup,
        detail: `key group ${key.keyGroup} carries ${fmt(groupLoad)} records/s, above what any subtask takes at the aim (${fmt(roomiest)}), and key "${key.key}" has ${fmt(key.rate)} of it, but the operator's state cannot merge partials: it stays whole`,
        evidence,
      });
      continue;
    }
    if (until !== null) {
      declined.push(coolingDown(key.key, key.keyGroup, until, `key "${key.key}" is hot enough to split`, key.rate));
      continue;
    }
    const ways = Math.max(2, Math.min(sheet.subtasks, Math.ceil(groupLoad / pieceLoad)));
    const owner = sheet.owners[key.keyGroup];
    const subtasks = [owner, ...leastLoaded(sheet, [owner], ways - 1)];
    level(sheet, sheet.addSplit(key.key, key.keyGroup, key.rate, subtasks, evenly(ways), null));
  }
  return declined;
}

/** Re-pours every split key over its subtasks (water-filling) against the loads as they now stand. */
export function levelSplits(sheet: PlanningSheet): void {
  // Two passes: splits that share subtasks see each other's new parts.
  for (let pass = 0; pass < 2; pass++) for (const split of sheet.splits) level(sheet, split);
}

/** A new split's subtasks that the levelling left without a part are dropped (they hold none of its state yet). */
export function dropEmptyParts(sheet: PlanningSheet): void {
  for (const split of sheet.splits) {
    if (split.previous !== null) continue;
    const owner = sheet.owners[split.keyGroup];
    const keep = split.subtasks.map((s, i) => s === owner || split.weights[i] > 1e-4);
    if (keep.every(Boolean)) continue;
    const subtasks = split.subtasks.filter((_, i) => keep[i]);
    const weights = split.weights.filter((_, i) => keep[i]);
    const sum = weights.reduce((a, w) => a + w, 0);
    sheet.setWeights(split, subtasks, sum > 0 ? weights.map((w) => w / sum) : evenly(subtasks.length));
  }
}

function level(sheet: PlanningSheet, split: WorkingSplit): void {
  const others = split.subtasks.map((s) => sheet.loadWithout(split, s));
  const fair = split.subtasks.map((s) => sheet.fair[s]);
  sheet.setWeights(split, split.subtasks, waterFill(split.rate, others, fair));
}

/** `count` subtasks not in `taken`, least utilised first (the lowest index among equals). */
function leastLoaded(sheet: PlanningSheet, taken: readonly number[], count: number): number[] {
  const candidates: number[] = [];
  for (let s = 0; s < sheet.subtasks; s++) if (!taken.includes(s)) candidates.push(s);
  return candidates.sort((a, b) => sheet.utilization(a) - sheet.utilization(b) || a - b).slice(0, count);
}

function evenly(count: number): number[] {
  return new Array<number>(count).fill(1 / count);
}

function coolingDown(key: string, keyGroup: number, until: number, why: string, keyRate: number): DeclinedAction {
  return {
    action: 'split',
    reason: 'cool-down',
    key,
    keyGroup,
    detail: `${why}, but key group ${keyGroup} changed less than the cool-down ago`,
    evidence: { keyRate, coolingUntilMs: until },
  };
}

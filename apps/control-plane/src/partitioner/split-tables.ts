/**
 * Between the engine's split keys and the planner's. The engine sends a split key's records to key groups (its
 * parts: its own, and one key group owned by each other subtask that takes a share), so a part's records are counted
 * under that host key group and the sketch names them there. The planner reasons in subtasks: a split key routed to
 * several subtasks, its records counted under its own key group wherever they land (libs/partitioner load-model.ts).
 * `plannerView` turns the first into the second; `tableAfter` turns the planner's splits and fold-backs back into
 * the engine's table.
 */
import type { ReportedKeySplit, SubtaskMetricsSnapshot } from '@weir/metrics';
import { splitId, type PartitioningDecision, type SplitAssignment } from '@weir/partitioner';

export type SplitView =
  /** `splittable`: the operator is a splittable window (its subtasks report a table, empty or not). */
  | { readonly ok: true; readonly splittable: boolean; readonly table: readonly ReportedKeySplit[]; readonly snapshots: SubtaskMetricsSnapshot[]; readonly splits: SplitAssignment[] }
  | { readonly ok: false; readonly why: string };

/**
 * The operator's split table in effect (every subtask reports the same one: process 0 hands it to the others, and
 * a look in between waits) and its snapshots as the planner models them: each host key group's count of a split
 * key's records moved to the key's own key group on that subtask, the sketch's entries of it relabelled likewise.
 */
export function plannerView(snapshots: readonly SubtaskMetricsSnapshot[], owners: readonly number[]): SplitView {
  const reported = snapshots.map((s) => s.keySplits);
  if (reported.every((t) => t === undefined)) return { ok: true, splittable: false, table: [], snapshots: [...snapshots], splits: [] };
  const signature = (t: readonly ReportedKeySplit[] | undefined) => JSON.stringify(t ?? null);
  const first = signature(reported[0]);
  if (reported.some((t) => signature(t) !== first)) return { ok: false, why: 'its subtasks report different split tables (a change is still reaching every process)' };
  const table = reported[0] ?? [];
  if (table.length === 0) return { ok: true, splittable: true, table, snapshots: [...snapshots], splits: [] };
  const hostOf = new Map<string, number>();
  for (const split of table) for (const part of split.parts) if (part !== split.keyGroup) hostOf.set(splitId({ key: split.key, keyGroup: part }), split.keyGroup);
  const rewritten = snapshots.map((s) => {
    const counts: Record<string, number> = { ...s.keyGroupCounts };
    const heavyKeys = s.heavyKeys.map((h) => {
      const own = hostOf.get(splitId(h));
      if (own === undefined) return h;
      const moved = Math.min(h.count, counts[h.keyGroup] ?? 0);
      counts[h.keyGroup] = (counts[h.keyGroup] ?? 0) - moved;
      counts[own] = (counts[own] ?? 0) + moved;
      return { ...h, keyGroup: own };
    });
    return { ...s, keyGroupCounts: counts, heavyKeys };
  });
  return { ok: true, splittable: true, table, snapshots: rewritten, splits: table.map((split) => assignmentOf(split, owners)) };
}

/** A reported split as the planner sees it: its parts' owners, with the weights of parts on one subtask summed. */
function assignmentOf(split: ReportedKeySplit, owners: readonly number[]): SplitAssignment {
  const weightOn = new Map<number, number>();
  // The key's own key group's owner first: the planner folds back there.
  weightOn.set(owners[split.keyGroup], 0);
  split.parts.forEach((part, i) => weightOn.set(owners[part], (weightOn.get(owners[part]) ?? 0) + split.weights[i]));
  return { key: split.key, keyGroup: split.keyGroup, subtasks: [...weightOn.keys()], weights: [...weightOn.values()] };
}

/**
 * The engine's table once the decision is made (its moves too, which change who owns a host), or null when the
 * decision changes no split. A subtask's part is the key's own key group on its owner, the key group that already
 * hosted the key's part there, else the least loaded key group it owns.
 */
export function tableAfter(
  decision: Pick<PartitioningDecision, 'splits' | 'foldBacks' | 'moves'>,
  current: readonly ReportedKeySplit[],
  owners: readonly number[],
  keyGroupRates: readonly number[],
): ReportedKeySplit[] | null {
  if (decision.splits.length === 0 && decision.foldBacks.length === 0) return null;
  const ownersAfter = [...owners];
  for (const move of decision.moves) ownersAfter[move.keyGroup] = move.toSubtask;
  const table = new Map(current.map((s) => [splitId(s), s]));
  for (const fold of decision.foldBacks) table.delete(splitId(fold));
  for (const split of decision.splits) {
    const previous = table.get(splitId(split));
    const parts: number[] = [];
    const weights: number[] = [];
    split.subtasks.forEach((subtask, i) => {
      const part = partOn(subtask, split.keyGroup, previous, ownersAfter, keyGroupRates, parts);
      if (part === null) return;
      parts.push(part);
      weights.push(split.weights[i]);
    });
    const sum = weights.reduce((a, w) => a + w, 0);
    if (parts.length < 2 || !(sum > 0)) {
      table.delete(splitId(split));
      continue;
    }
    table.set(splitId(split), { key: split.key, keyGroup: split.keyGroup, parts, weights: normalised(weights, sum) });
  }
  return [...table.values()];
}

function partOn(
  subtask: number,
  keyGroup: number,
  previous: ReportedKeySplit | undefined,
  owners: readonly number[],
  keyGroupRates: readonly number[],
  taken: readonly number[],
): number | null {
  if (owners[keyGroup] === subtask) return keyGroup;
  const kept = previous?.parts.find((p) => p !== keyGroup && owners[p] === subtask && !taken.includes(p));
  if (kept !== undefined) return kept;
  let best: number | null = null;
  for (let kg = 0; kg < owners.length; kg++) {
    if (owners[kg] !== subtask || taken.includes(kg)) continue;
    if (best === null || (keyGroupRates[kg] ?? 0) < (keyGroupRates[best] ?? 0)) best = kg;
  }
  return best;
}

/** Weights summing to exactly 1 (the engine checks to 1e-6; the last absorbs the rounding). */
function normalised(weights: readonly number[], sum: number): number[] {
  const out = weights.map((w) => Math.round((w / sum) * 1e6) / 1e6);
  out[out.length - 1] = Math.round((1 - out.slice(0, -1).reduce((a, w) => a + w, 0)) * 1e6) / 1e6;
  return out;
}

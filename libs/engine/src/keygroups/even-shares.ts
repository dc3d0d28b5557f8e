/**
 * The key-group moves that give `parallelism` subtasks even shares of a keyed operator's key groups, moving as few
 * as possible: a live rescale's plan. Every subtask ends with ⌊n/p⌋ or ⌈n/p⌉ key groups (the larger shares go to the
 * subtasks that own most already); a subtask keeps its lowest key groups and gives up its highest; subtasks at or
 * past `parallelism` (retiring) give up everything. The moves come in key-group order per receiving subtask.
 */
import { assertParallelism } from './key-groups';

export interface PlannedMove {
  readonly keyGroup: number;
  readonly fromSubtask: number;
  readonly toSubtask: number;
}

export function evenShareMoves(owners: readonly number[], parallelism: number): PlannedMove[] {
  assertParallelism(parallelism, owners.length);
  const owned = new Map<number, number[]>();
  owners.forEach((owner, kg) => {
    const list = owned.get(owner);
    if (list) list.push(kg);
    else owned.set(owner, [kg]);
  });
  const base = Math.floor(owners.length / parallelism);
  const larger = owners.length % parallelism;
  const staying = Array.from({ length: parallelism }, (_, s) => s);
  // The larger shares go to whoever owns most now (fewest moves); ties to the lower index.
  const byHolding = [...staying].sort((a, b) => (owned.get(b)?.length ?? 0) - (owned.get(a)?.length ?? 0) || a - b);
  const share = new Map(staying.map((s) => [s, base]));
  for (const s of byHolding.slice(0, larger)) share.set(s, base + 1);

  const surplus: { keyGroup: number; from: number }[] = [];
  for (const [owner, kgs] of owned) {
    const keep = owner < parallelism ? share.get(owner)! : 0;
    for (const kg of kgs.slice(keep)) surplus.push({ keyGroup: kg, from: owner });
  }
  surplus.sort((a, b) => a.keyGroup - b.keyGroup);
  const moves: PlannedMove[] = [];
  let next = 0;
  for (const s of staying) {
    const missing = share.get(s)! - Math.min(owned.get(s)?.length ?? 0, share.get(s)!);
    for (let i = 0; i < missing; i++, next++) moves.push({ keyGroup: surplus[next].keyGroup, fromSubtask: surplus[next].from, toSubtask: s });
  }
  return moves;
}

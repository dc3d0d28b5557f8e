/**
 * How much of a split key each of its subtasks takes: water-filling. The key's rate is poured over its subtasks so
 * that the least utilised fill up first and those that end up taking a part end at the same utilisation; a subtask
 * already above that level takes nothing. This evens the split's subtasks with one number each, and changing it
 * moves no state (their partials stay), which is why a split absorbs what whole key groups are too coarse to even.
 */
export function waterFill(rate: number, otherLoads: readonly number[], fairLoads: readonly number[]): number[] {
  const k = otherLoads.length;
  if (k === 0) return [];
  if (!(rate > 0)) return otherLoads.map(() => 1 / k);
  // Subtasks by utilisation before the key (the lowest index first among equals).
  const order = otherLoads.map((_, i) => i).sort((a, b) => otherLoads[a] / fairLoads[a] - otherLoads[b] / fairLoads[b] || a - b);
  // Find the level λ (a utilisation) with Σ max(0, λ·fair_i − other_i) = rate over the first m in that order.
  let loadSum = 0;
  let fairSum = 0;
  let level = 0;
  for (let m = 0; m < k; m++) {
    const i = order[m];
    loadSum += otherLoads[i];
    fairSum += fairLoads[i];
    level = (rate + loadSum) / fairSum;
    const next = m + 1 < k ? otherLoads[order[m + 1]] / fairLoads[order[m + 1]] : Infinity;
    if (level <= next) break;
  }
  const pieces = otherLoads.map((load, i) => Math.max(0, level * fairLoads[i] - load));
  const sum = pieces.reduce((a, p) => a + p, 0);
  return pieces.map((p) => p / sum);
}

import type { HeavyKey, SubtaskMetricsSnapshot } from './contract';

type HeavyKeyReport = Pick<SubtaskMetricsSnapshot, 'heavyKeys' | 'keyGroupCounts'>;

/**
 * Merges the heavy-key lists of subtasks of ONE operator into the top `k` of their union.
 *
 * A key missing from a subtask's list may still have had records there; its true count on that subtask is at most
 * both the subtask's records in the key's key group and the smallest count the subtask listed (a listed top-k
 * holds every larger estimate). That bound is added to the key's count and error, so the merged entries keep
 * `count - error ≤ true ≤ count`. Since a key group is normally routed to one subtask, the bound is usually 0.
 */
export function mergeHeavyKeysOfOperator(reports: readonly HeavyKeyReport[], k: number): HeavyKey[] {
  const floors = reports.map((report) => minListedCount(report.heavyKeys));
  const merged = new Map<string, { keyGroup: number; count: number; error: number }>();
  for (const report of reports) {
    for (const heavy of report.heavyKeys) {
      if (!merged.has(heavy.key)) merged.set(heavy.key, { keyGroup: heavy.keyGroup, count: 0, error: 0 });
    }
  }
  const listedBy = reports.map((report) => new Map(report.heavyKeys.map((heavy) => [heavy.key, heavy])));
  for (const [key, entry] of merged) {
    reports.forEach((report, i) => {
      const listed = listedBy[i].get(key);
      if (listed !== undefined) {
        entry.count += listed.count;
        entry.error += listed.error;
      } else {
        const bound = Math.min(report.keyGroupCounts[entry.keyGroup] ?? 0, floors[i]);
        entry.count += bound;
        entry.error += bound;
      }
    });
  }
  return topOf(merged, k);
}

/**
 * Merges per-operator heavy keys into one job-wide list: a key's entry is the one from the operator where its
 * estimated count is highest (the load it puts on a single operator). Summing across operators would count a
 * record once per operator it passes through.
 */
export function mergeHeavyKeysAcrossOperators(perOperator: readonly (readonly HeavyKey[])[], k: number): HeavyKey[] {
  const best = new Map<string, { keyGroup: number; count: number; error: number }>();
  for (const list of perOperator) {
    for (const heavy of list) {
      const current = best.get(heavy.key);
      if (current === undefined || heavy.count > current.count) {
        best.set(heavy.key, { keyGroup: heavy.keyGroup, count: heavy.count, error: heavy.error });
      }
    }
  }
  return topOf(best, k);
}

function minListedCount(heavyKeys: readonly HeavyKey[]): number {
  let min = Infinity;
  for (const heavy of heavyKeys) if (heavy.count < min) min = heavy.count;
  return min === Infinity ? 0 : min;
}

function topOf(entries: Map<string, { keyGroup: number; count: number; error: number }>, k: number): HeavyKey[] {
  return [...entries]
    .map(([key, entry]): HeavyKey => ({ key, keyGroup: entry.keyGroup, count: entry.count, error: entry.error }))
    .sort((a, b) => b.count - a.count || a.error - b.error || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .slice(0, k);
}

/** A live worker as placement sees it. */
export interface WorkerCapacity {
  readonly id: string;
  readonly slots: number;
  /** The larger of what open runs hold on it and what it reports running (strays included). */
  readonly slotsInUse: number;
}

/**
 * Where each process of a run goes (`workerIds[i]` hosts process i), or why it cannot go anywhere yet: the run
 * needs `needed` slots and the fleet has `free` free on `live` live workers.
 */
export type Spread =
  | { readonly placed: true; readonly workerIds: readonly string[] }
  | { readonly placed: false; readonly needed: number; readonly free: number; readonly live: number };

export class PlacementArgumentError extends Error {
  override readonly name = 'PlacementArgumentError';
}

/**
 * Spreads a run's `processes` (one slot each) over the live workers: the worker with the most free slots first
 * (ties: lowest id, so two decisions on the same view agree) takes as many processes as it has free slots, then
 * the next. Filling the freest worker rather than dealing one process to each keeps a run on as few workers as
 * the free slots allow: every worker of a run is one more whose loss restarts the whole run. Runs after it still
 * spread over the fleet, since each starts at whichever worker is freest by then. Process 0, which leads the run's
 * checkpoints, lands on the freest worker.
 * All or nothing: a run wider than the fleet's free slots is not placed at all (docs/deployments.md says why).
 */
export function spreadProcesses(workers: readonly WorkerCapacity[], processes: number): Spread {
  if (!Number.isInteger(processes) || processes < 1) throw new PlacementArgumentError(`a run has at least one process, not ${processes}`);
  const free = workers
    .map((w) => ({ id: w.id, free: Math.max(0, w.slots - w.slotsInUse) }))
    .filter((w) => w.free > 0)
    .sort((a, b) => b.free - a.free || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const total = free.reduce((n, w) => n + w.free, 0);
  if (total < processes) return { placed: false, needed: processes, free: total, live: workers.length };
  const workerIds: string[] = [];
  for (const w of free) {
    for (let k = 0; k < w.free && workerIds.length < processes; k++) workerIds.push(w.id);
    if (workerIds.length === processes) break;
  }
  return { placed: true, workerIds };
}

/** What a run that does not fit waits for, in words: "waiting for 4 free slots: the fleet has 3 free on 2 live workers". */
export function shortageReason(shortage: { readonly needed: number; readonly free: number; readonly live: number }): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const fleet = shortage.live === 0 ? 'the fleet has no live worker' : `the fleet has ${shortage.free} free on ${plural(shortage.live, 'live worker')}`;
  return `waiting for ${plural(shortage.needed, 'free slot')}: ${fleet}`;
}

/** A live worker as placement sees it. */
export interface WorkerCapacity {
  readonly id: string;
  readonly slots: number;
  /** The larger of what open runs hold on it and what it reports running (strays included). */
  readonly slotsInUse: number;
}

export interface PlacementDecision {
  readonly workerId: string;
  readonly freeSlots: number;
}

/**
 * Picks the live worker with the most free slots that can take `needed` (ties: lowest id, so two decisions on the
 * same view agree). Spreading rather than packing keeps one worker's loss from taking many deployments with it.
 */
export function chooseWorker(workers: readonly WorkerCapacity[], needed: number): PlacementDecision | null {
  let best: PlacementDecision | null = null;
  for (const w of [...workers].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    const free = w.slots - w.slotsInUse;
    if (free >= needed && (!best || free > best.freeSlots)) best = { workerId: w.id, freeSlots: free };
  }
  return best;
}

import type { WindowAggregate } from '@weir/rules';

/** Per slot, four numbers in a bucket's totals: count of finite values, sum, min, max. */
const PER_SLOT = 4;

/** Adds one slot of a bucket's totals (from BucketAggregates.of) to a window's aggregate. */
export function addBucketTotals(acc: WindowAggregate, totals: Float64Array, slot: number): void {
  const at = slot * PER_SLOT;
  acc.addTotals(totals[at], totals[at + 1], totals[at + 2], totals[at + 3]);
}

/**
 * Totals of every slot of a bucket's flat entries (`stride` numbers per transaction), so that judging reads a
 * bucket wholly inside the window in O(1) instead of scanning it. Kept beside state, not in it, keyed by the entries
 * array: the evaluator appends to that array in place, so totals are extended from the length they were computed at;
 * an array reloaded from the store is a new object and is summed once.
 */
export class BucketAggregates {
  private readonly cache = new WeakMap<number[], { length: number; totals: Float64Array }>();

  constructor(private readonly stride: number) {}

  of(entries: number[]): Float64Array {
    let cached = this.cache.get(entries);
    if (!cached) {
      const totals = new Float64Array(this.stride * PER_SLOT);
      for (let s = 0; s < this.stride; s++) {
        totals[s * PER_SLOT + 2] = Infinity;
        totals[s * PER_SLOT + 3] = -Infinity;
      }
      cached = { length: 0, totals };
      this.cache.set(entries, cached);
    }
    const { totals } = cached;
    const stride = this.stride;
    for (let i = cached.length; i + stride <= entries.length; i += stride) {
      for (let s = 0; s < stride; s++) {
        const value = entries[i + s];
        // Slot 0 is the timestamp (always finite): its count is the bucket's transaction count.
        if (!Number.isFinite(value)) continue;
        const at = s * PER_SLOT;
        totals[at]++;
        totals[at + 1] += value;
        if (value < totals[at + 2]) totals[at + 2] = value;
        if (value > totals[at + 3]) totals[at + 3] = value;
      }
    }
    cached.length = entries.length - (entries.length % stride);
    return totals;
  }
}

import type { AggregateFunctionName } from '@weir/rules';

/** Per slot, four numbers in a bucket's totals: count of finite values, sum, min, max. */
const PER_SLOT = 4;

/**
 * A window's running aggregate, fed one value at a time (where the window's edges cut a bucket) or one bucket's
 * totals at a time (buckets wholly inside the window). The same results as @weir/rules' WindowAggregate; a SUM is
 * added bucket by bucket, which is exact for the integer amounts the job handles (minor units), and may differ in the
 * last bits from a value-by-value sum for fractional values.
 */
export class WindowTotals {
  private count = 0;
  private sum = 0;
  private min = Infinity;
  private max = -Infinity;

  add(value: number): void {
    this.count++;
    this.sum += value;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }

  /** Adds the totals of one slot of a bucket (from BucketAggregates.of). */
  merge(totals: Float64Array, slot: number): void {
    const at = slot * PER_SLOT;
    const count = totals[at];
    if (count === 0) return;
    this.count += count;
    this.sum += totals[at + 1];
    if (totals[at + 2] < this.min) this.min = totals[at + 2];
    if (totals[at + 3] > this.max) this.max = totals[at + 3];
  }

  result(fn: AggregateFunctionName): number | undefined {
    if (fn === 'COUNT') return this.count;
    if (this.count === 0) return undefined;
    switch (fn) {
      case 'SUM':
        return this.sum;
      case 'AVG':
        return this.sum / this.count;
      case 'MIN':
        return this.min;
      case 'MAX':
        return this.max;
    }
  }
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

import { MetricsArgumentError } from './errors';

/**
 * Records per key group in the current interval: a typed array indexed by key group (sized by the job's max
 * parallelism), plus the list of key groups touched so snapshot and reset cost O(touched), not O(maxParallelism).
 */
export class KeyGroupCounters {
  readonly maxParallelism: number;
  private readonly counts: Float64Array;
  private readonly touched: Int32Array;
  private touchedCount = 0;

  constructor(maxParallelism: number) {
    if (!Number.isInteger(maxParallelism) || maxParallelism < 1 || maxParallelism > 32768) {
      throw new MetricsArgumentError(`maxParallelism must be an integer in 1..32768, got ${maxParallelism}`);
    }
    this.maxParallelism = maxParallelism;
    this.counts = new Float64Array(maxParallelism);
    this.touched = new Int32Array(maxParallelism);
  }

  /** Adds n (> 0; other values are ignored so a key group is listed once at most) to one key group. */
  add(keyGroup: number, n = 1): void {
    if (!(n > 0)) return;
    // `>>> 0` keeps only non-negative integers equal to themselves: one cheap check for negatives, fractions, NaN.
    if (!(keyGroup >>> 0 === keyGroup && keyGroup < this.maxParallelism)) {
      throw new MetricsArgumentError(`key group ${keyGroup} outside 0..${this.maxParallelism - 1}`);
    }
    if (this.counts[keyGroup] === 0) this.touched[this.touchedCount++] = keyGroup;
    this.counts[keyGroup] += n;
  }

  /** Adds 1 for each entry of keyGroups[from..to). */
  addMany(keyGroups: ArrayLike<number>, from = 0, to = keyGroups.length): void {
    for (let i = from; i < to; i++) this.add(keyGroups[i], 1);
  }

  get(keyGroup: number): number {
    return this.counts[keyGroup] ?? 0;
  }

  /** Key groups with a non-zero count, as the plain object the snapshot carries. */
  snapshot(): Record<number, number> {
    const result: Record<number, number> = {};
    for (let i = 0; i < this.touchedCount; i++) {
      const keyGroup = this.touched[i];
      if (this.counts[keyGroup] !== 0) result[keyGroup] = this.counts[keyGroup];
    }
    return result;
  }

  reset(): void {
    for (let i = 0; i < this.touchedCount; i++) this.counts[this.touched[i]] = 0;
    this.touchedCount = 0;
  }
}

import type { HeavyKey } from './contract';
import { MetricsArgumentError } from './errors';

const NONE = -1;

/**
 * Space-saving top-k sketch (Metwally, Agrawal, El Abbadi, "Efficient computation of frequent and top-k elements
 * in data streams", ICDT 2005) over keys tagged with their key group: the dynamic partitioner's view of hot keys.
 *
 * With `capacity` m counters over a stream of total weight N, every key whose true count exceeds N/m is held, and
 * each held key's estimate satisfies `count - error ≤ true count ≤ count`. The "Stream-Summary" layout (counters
 * grouped in buckets of equal count, buckets in a count-ordered list) makes a unit `offer` O(1): the counter
 * moves to the next bucket. A weighted offer walks forward past the buckets it overtakes.
 *
 * Everything lives in typed arrays preallocated at construction; the only allocation on `offer` is the Map entry
 * for a newly admitted key (the key string is the caller's).
 */
export class HeavyHitters {
  readonly capacity: number;
  private readonly index = new Map<string, number>();
  // Counters ("slots"): a doubly linked list per bucket.
  private readonly slotKey: (string | undefined)[];
  private readonly slotGroup: Int32Array;
  private readonly slotCount: Float64Array;
  private readonly slotError: Float64Array;
  private readonly slotBucket: Int32Array;
  private readonly slotPrev: Int32Array;
  private readonly slotNext: Int32Array;
  // Buckets: one per distinct count, doubly linked in ascending count order. One spare: while a counter moves
  // out of a bucket it is the only member of, both buckets exist.
  private readonly bucketCount: Float64Array;
  private readonly bucketHead: Int32Array;
  private readonly bucketPrev: Int32Array;
  private readonly bucketNext: Int32Array;
  private readonly freeBuckets: Int32Array;
  private freeTop = 0;
  private used = 0;
  private minBucket = NONE;
  private maxBucket = NONE;
  private offeredWeight = 0;

  constructor(capacity = 512) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new MetricsArgumentError(`heavy-hitters capacity must be a positive integer, got ${capacity}`);
    }
    this.capacity = capacity;
    this.slotKey = new Array<string | undefined>(capacity).fill(undefined);
    this.slotGroup = new Int32Array(capacity);
    this.slotCount = new Float64Array(capacity);
    this.slotError = new Float64Array(capacity);
    this.slotBucket = new Int32Array(capacity);
    this.slotPrev = new Int32Array(capacity);
    this.slotNext = new Int32Array(capacity);
    this.bucketCount = new Float64Array(capacity + 1);
    this.bucketHead = new Int32Array(capacity + 1);
    this.bucketPrev = new Int32Array(capacity + 1);
    this.bucketNext = new Int32Array(capacity + 1);
    this.freeBuckets = new Int32Array(capacity + 1);
    this.reset();
  }

  /** Counts `count` occurrences of `key` (weights ≤ 0 and NaN are ignored). */
  offer(key: string, keyGroup: number, count = 1): void {
    if (!(count > 0)) return;
    this.offeredWeight += count;
    let slot = this.index.get(key);
    if (slot === undefined) {
      if (this.used < this.capacity) {
        slot = this.used++;
        this.slotCount[slot] = 0;
        this.slotError[slot] = 0;
        this.slotBucket[slot] = NONE;
      } else {
        // Evict a counter with the minimum count; the newcomer inherits it as its possible overestimate.
        slot = this.bucketHead[this.minBucket];
        this.index.delete(this.slotKey[slot] as string);
        this.slotError[slot] = this.slotCount[slot];
      }
      this.slotKey[slot] = key;
      this.slotGroup[slot] = keyGroup;
      this.index.set(key, slot);
    }
    this.increment(slot, count);
  }

  /** Offers a batch: keys[i] with keyGroups[i], each with weight 1. */
  offerMany(keys: readonly string[], keyGroups: ArrayLike<number>, from = 0, to = keys.length): void {
    for (let i = from; i < to; i++) this.offer(keys[i], keyGroups[i], 1);
  }

  /** Total weight offered since the last reset (N). */
  get offered(): number {
    return this.offeredWeight;
  }

  /** Number of keys held (≤ capacity). */
  get size(): number {
    return this.used;
  }

  /**
   * Upper bound on the true count of any key not held: the smallest counter once the sketch is full, else 0
   * (until then the sketch is exact).
   */
  get floor(): number {
    return this.used < this.capacity || this.minBucket === NONE ? 0 : this.bucketCount[this.minBucket];
  }

  /** Estimate for one key (the floor when it is not held, since its true count is at most that). */
  estimate(key: string): { count: number; error: number } {
    const slot = this.index.get(key);
    if (slot === undefined) return { count: this.floor, error: this.floor };
    return { count: this.slotCount[slot], error: this.slotError[slot] };
  }

  /** The k keys with the highest estimated counts, highest first. Allocates; call it per interval, not per record. */
  top(k: number): HeavyKey[] {
    const result: HeavyKey[] = [];
    for (let bucket = this.maxBucket; bucket !== NONE && result.length < k; bucket = this.bucketPrev[bucket]) {
      for (let slot = this.bucketHead[bucket]; slot !== NONE && result.length < k; slot = this.slotNext[slot]) {
        result.push({
          key: this.slotKey[slot] as string,
          keyGroup: this.slotGroup[slot],
          count: this.slotCount[slot],
          error: this.slotError[slot],
        });
      }
    }
    // Within a bucket (equal counts) the tighter estimate first.
    return result.sort((a, b) => b.count - a.count || a.error - b.error);
  }

  /** Forgets everything (a new interval). O(capacity). */
  reset(): void {
    this.index.clear();
    this.slotKey.fill(undefined);
    this.used = 0;
    this.minBucket = NONE;
    this.maxBucket = NONE;
    this.offeredWeight = 0;
    this.freeTop = 0;
    for (let bucket = this.bucketCount.length - 1; bucket >= 0; bucket--) this.freeBuckets[this.freeTop++] = bucket;
  }

  /**
   * A sketch of the union of several streams (e.g. one sketch per subtask), with `capacity` counters.
   * Mergeable-summary rule: a key's merged count is the sum over sketches of its count there, or of that sketch's
   * floor when it does not hold the key (added to the error too), so `count - error ≤ true ≤ count` still holds.
   */
  static merge(sketches: readonly HeavyHitters[], capacity = sketches[0]?.capacity ?? 512): HeavyHitters {
    const merged = new Map<string, { keyGroup: number; count: number; error: number }>();
    for (const sketch of sketches) {
      for (const [key, slot] of sketch.index) {
        if (!merged.has(key)) merged.set(key, { keyGroup: sketch.slotGroup[slot], count: 0, error: 0 });
      }
    }
    for (const [key, entry] of merged) {
      for (const sketch of sketches) {
        const slot = sketch.index.get(key);
        entry.count += slot === undefined ? sketch.floor : sketch.slotCount[slot];
        entry.error += slot === undefined ? sketch.floor : sketch.slotError[slot];
      }
    }
    const kept = [...merged].sort((a, b) => b[1].count - a[1].count).slice(0, capacity);
    const result = new HeavyHitters(capacity);
    // Descending order: each insertion lands at the bottom of the bucket list without walking it.
    for (const [key, entry] of kept) result.load(key, entry.keyGroup, entry.count, entry.error);
    for (const sketch of sketches) result.offeredWeight += sketch.offeredWeight;
    return result;
  }

  private load(key: string, keyGroup: number, count: number, error: number): void {
    const slot = this.used++;
    this.slotKey[slot] = key;
    this.slotGroup[slot] = keyGroup;
    this.slotCount[slot] = 0;
    this.slotError[slot] = error;
    this.slotBucket[slot] = NONE;
    this.index.set(key, slot);
    this.increment(slot, count);
  }

  private increment(slot: number, by: number): void {
    const from = this.slotBucket[slot];
    const target = this.slotCount[slot] + by;
    let prev = from;
    let next = from === NONE ? this.minBucket : this.bucketNext[from];
    while (next !== NONE && this.bucketCount[next] < target) {
      prev = next;
      next = this.bucketNext[next];
    }
    const to = next !== NONE && this.bucketCount[next] === target ? next : this.insertBucket(prev, next, target);
    if (from !== NONE) this.detach(slot, from);
    this.attach(slot, to);
    this.slotCount[slot] = target;
  }

  private insertBucket(prev: number, next: number, count: number): number {
    const bucket = this.freeBuckets[--this.freeTop];
    this.bucketCount[bucket] = count;
    this.bucketHead[bucket] = NONE;
    this.bucketPrev[bucket] = prev;
    this.bucketNext[bucket] = next;
    if (prev === NONE) this.minBucket = bucket;
    else this.bucketNext[prev] = bucket;
    if (next === NONE) this.maxBucket = bucket;
    else this.bucketPrev[next] = bucket;
    return bucket;
  }

  private attach(slot: number, bucket: number): void {
    const head = this.bucketHead[bucket];
    this.slotPrev[slot] = NONE;
    this.slotNext[slot] = head;
    if (head !== NONE) this.slotPrev[head] = slot;
    this.bucketHead[bucket] = slot;
    this.slotBucket[slot] = bucket;
  }

  private detach(slot: number, bucket: number): void {
    const prev = this.slotPrev[slot];
    const next = this.slotNext[slot];
    if (prev === NONE) this.bucketHead[bucket] = next;
    else this.slotNext[prev] = next;
    if (next !== NONE) this.slotPrev[next] = prev;
    if (this.bucketHead[bucket] === NONE) this.removeBucket(bucket);
  }

  private removeBucket(bucket: number): void {
    const prev = this.bucketPrev[bucket];
    const next = this.bucketNext[bucket];
    if (prev === NONE) this.minBucket = next;
    else this.bucketNext[prev] = next;
    if (next === NONE) this.maxBucket = prev;
    else this.bucketPrev[next] = prev;
    this.freeBuckets[this.freeTop++] = bucket;
  }
}

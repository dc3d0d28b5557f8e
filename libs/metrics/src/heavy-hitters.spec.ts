import { describe, expect, it } from 'vitest';
import { MetricsArgumentError } from './errors';
import { HeavyHitters } from './heavy-hitters';
import { seededRandom, zipfSampler } from '@weir/datagen';

const KEYS = 100_000;
const keyName = (rank: number) => `user-${(rank * 7919) % KEYS}`;
const keyGroupOf = (rank: number) => (rank * 2654435761) % 128;

function zipfStream(records: number, exponent: number, seed: number) {
  const next = zipfSampler(KEYS, exponent, seededRandom(seed));
  const ranks = new Int32Array(records);
  const truth = new Float64Array(KEYS);
  for (let i = 0; i < records; i++) {
    ranks[i] = next();
    truth[ranks[i]]++;
  }
  return { ranks, truth };
}

function trueTop(truth: Float64Array, k: number): number[] {
  return [...truth.keys()].sort((a, b) => truth[b] - truth[a]).slice(0, k);
}

describe('HeavyHitters', () => {
  it('finds the true top-10 of Zipf(1.2) over 100k keys, each count within its error bound', () => {
    const { ranks, truth } = zipfStream(1_000_000, 1.2, 42);
    const names = Array.from({ length: KEYS }, (_, rank) => keyName(rank));
    const sketch = new HeavyHitters(512);
    for (let i = 0; i < ranks.length; i++) sketch.offer(names[ranks[i]], keyGroupOf(ranks[i]));

    const rankOf = new Map(names.map((name, rank) => [name, rank]));
    const reported = sketch.top(10);
    expect(reported.map((heavy) => rankOf.get(heavy.key)).sort((a, b) => a! - b!)).toEqual(
      trueTop(truth, 10).sort((a, b) => a - b),
    );
    for (const heavy of sketch.top(64)) {
      const rank = rankOf.get(heavy.key)!;
      expect(heavy.keyGroup).toBe(keyGroupOf(rank));
      expect(heavy.count - heavy.error).toBeLessThanOrEqual(truth[rank]);
      expect(heavy.count).toBeGreaterThanOrEqual(truth[rank]);
    }
    // The hottest key's share should be close to the published ~0.196 for z=1.2 over 1e5 keys.
    expect(reported[0].count / ranks.length).toBeGreaterThan(0.18);
    expect(reported[0].count / ranks.length).toBeLessThan(0.21);
  });

  it('keeps the space-saving guarantees under random weighted offers (checked against exact counts)', () => {
    const random = seededRandom(7);
    const capacity = 16;
    const sketch = new HeavyHitters(capacity);
    const truth = new Map<string, number>();
    let total = 0;
    for (let i = 0; i < 20_000; i++) {
      // A few heavy keys plus a long tail.
      const key = random() < 0.5 ? `hot-${Math.floor(random() * 4)}` : `tail-${Math.floor(random() * 500)}`;
      const weight = 1 + Math.floor(random() * 5);
      sketch.offer(key, 0, weight);
      truth.set(key, (truth.get(key) ?? 0) + weight);
      total += weight;
    }
    expect(sketch.offered).toBe(total);
    expect(sketch.size).toBe(capacity);
    const held = sketch.top(capacity);
    expect(held.reduce((sum, heavy) => sum + heavy.count, 0)).toBe(total);
    for (let i = 1; i < held.length; i++) expect(held[i - 1].count).toBeGreaterThanOrEqual(held[i].count);
    for (const heavy of held) {
      expect(heavy.count).toBeGreaterThanOrEqual(truth.get(heavy.key)!);
      expect(heavy.count - heavy.error).toBeLessThanOrEqual(truth.get(heavy.key)!);
    }
    const heldKeys = new Set(held.map((heavy) => heavy.key));
    for (const [key, count] of truth) {
      if (count > total / capacity) expect(heldKeys.has(key)).toBe(true);
      if (!heldKeys.has(key)) expect(count).toBeLessThanOrEqual(sketch.floor);
    }
  });

  it('is exact while it holds fewer keys than its capacity', () => {
    const sketch = new HeavyHitters(8);
    sketch.offer('a', 1, 3);
    sketch.offer('b', 2);
    sketch.offer('a', 1);
    sketch.offer('c', 3, 2);
    expect(sketch.top(10)).toEqual([
      { key: 'a', keyGroup: 1, count: 4, error: 0 },
      { key: 'c', keyGroup: 3, count: 2, error: 0 },
      { key: 'b', keyGroup: 2, count: 1, error: 0 },
    ]);
    expect(sketch.floor).toBe(0);
    expect(sketch.estimate('zzz')).toEqual({ count: 0, error: 0 });
  });

  it('evicts a minimum counter and hands its count to the newcomer as error', () => {
    const sketch = new HeavyHitters(2);
    sketch.offer('a', 0, 5);
    sketch.offer('b', 0, 2);
    sketch.offer('c', 7);
    expect(sketch.top(2)).toEqual([
      { key: 'a', keyGroup: 0, count: 5, error: 0 },
      { key: 'c', keyGroup: 7, count: 3, error: 2 },
    ]);
    expect(sketch.estimate('b')).toEqual({ count: 3, error: 3 });
  });

  it('ignores non-positive and NaN weights', () => {
    const sketch = new HeavyHitters(4);
    sketch.offer('a', 0, 0);
    sketch.offer('a', 0, -2);
    sketch.offer('a', 0, Number.NaN);
    expect(sketch.size).toBe(0);
    expect(sketch.offered).toBe(0);
  });

  it('forgets everything on reset and keeps working', () => {
    const sketch = new HeavyHitters(2);
    for (const key of ['a', 'b', 'c', 'a']) sketch.offer(key, 0);
    sketch.reset();
    expect(sketch.top(5)).toEqual([]);
    expect(sketch.offered).toBe(0);
    sketch.offer('x', 1);
    sketch.offer('x', 1);
    expect(sketch.top(5)).toEqual([{ key: 'x', keyGroup: 1, count: 2, error: 0 }]);
  });

  it('merges sketches of partitioned and of split streams, keeping the error bounds', () => {
    const { ranks, truth } = zipfStream(400_000, 1.2, 3);
    const names = Array.from({ length: KEYS }, (_, rank) => keyName(rank));
    const random = seededRandom(11);
    const sketches = [new HeavyHitters(256), new HeavyHitters(256), new HeavyHitters(256), new HeavyHitters(256)];
    for (let i = 0; i < ranks.length; i++) {
      const rank = ranks[i];
      // Key groups routed by modulo, except the hottest key which is split over all four (two-phase aggregation).
      const target = rank === 0 ? Math.floor(random() * 4) : keyGroupOf(rank) % 4;
      sketches[target].offer(names[rank], keyGroupOf(rank));
    }
    const merged = HeavyHitters.merge(sketches, 256);
    expect(merged.offered).toBe(ranks.length);
    const rankOf = new Map(names.map((name, rank) => [name, rank]));
    const top = merged.top(10);
    expect(top.map((heavy) => rankOf.get(heavy.key)!).sort((a, b) => a - b)).toEqual(
      trueTop(truth, 10).sort((a, b) => a - b),
    );
    for (const heavy of merged.top(256)) {
      const exact = truth[rankOf.get(heavy.key)!];
      expect(heavy.count).toBeGreaterThanOrEqual(exact);
      expect(heavy.count - heavy.error).toBeLessThanOrEqual(exact);
    }
    // The merged sketch accepts further offers like any other.
    merged.offer(names[0], keyGroupOf(0), 5);
    expect(merged.estimate(names[0]).count).toBe(top.find((heavy) => heavy.key === names[0])!.count + 5);
  });

  it('rejects a capacity that is not a positive integer', () => {
    expect(() => new HeavyHitters(0)).toThrow(MetricsArgumentError);
    expect(() => new HeavyHitters(1.5)).toThrow(MetricsArgumentError);
  });
});

import { describe, expect, it } from 'vitest';
import { MetricsArgumentError } from './errors';
import { KeyGroupCounters } from './key-group-counters';

describe('KeyGroupCounters', () => {
  it('counts per key group and snapshots only the non-zero ones', () => {
    const counters = new KeyGroupCounters(128);
    counters.add(3);
    counters.add(3, 4);
    counters.addMany([0, 127, 0, 5], 0, 3);
    expect(counters.snapshot()).toEqual({ 0: 2, 3: 5, 127: 1 });
    expect(counters.get(3)).toBe(5);
  });

  it('resets to empty and counts again from zero', () => {
    const counters = new KeyGroupCounters(16);
    counters.add(1, 10);
    counters.add(2);
    counters.reset();
    expect(counters.snapshot()).toEqual({});
    counters.add(2);
    expect(counters.snapshot()).toEqual({ 2: 1 });
  });

  it('lists a key group once however often zero-weight adds touch it', () => {
    const counters = new KeyGroupCounters(4);
    for (let i = 0; i < 10; i++) counters.add(1, 0);
    counters.add(1);
    expect(counters.snapshot()).toEqual({ 1: 1 });
  });

  it('rejects key groups outside 0..maxParallelism-1 and bad sizes', () => {
    const counters = new KeyGroupCounters(8);
    for (const bad of [-1, 8, 1.5, Number.NaN]) expect(() => counters.add(bad)).toThrow(MetricsArgumentError);
    expect(() => new KeyGroupCounters(0)).toThrow(MetricsArgumentError);
    expect(() => new KeyGroupCounters(40_000)).toThrow(MetricsArgumentError);
  });
});

import { describe, expect, it } from 'vitest';
import { perSecond, RateCounter } from './rate-counter';

describe('RateCounter', () => {
  it('reports count and per-second rate of each interval and restarts the interval', () => {
    const counter = new RateCounter(10_000);
    counter.add(1500);
    counter.add(500);
    expect(counter.take(12_000)).toEqual({ fromMs: 10_000, toMs: 12_000, count: 2000, perSec: 1000 });
    counter.add(30);
    expect(counter.take(12_500)).toEqual({ fromMs: 12_000, toMs: 12_500, count: 30, perSec: 60 });
    expect(counter.count).toBe(0);
    expect(counter.total).toBe(2030);
  });

  it('reports a zero rate for an empty or zero-length interval', () => {
    const counter = new RateCounter(5);
    counter.add(3);
    expect(counter.take(5).perSec).toBe(0);
    expect(perSecond(10, 100, 50)).toBe(0);
  });
});

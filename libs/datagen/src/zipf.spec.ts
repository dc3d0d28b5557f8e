import { describe, expect, it } from 'vitest';
import { seededRandom } from './random';
import { zipfSampler, zipfTopShare } from './zipf';

describe('zipfSampler', () => {
  it('is deterministic per seed', () => {
    const a = zipfSampler(1000, 1.0, seededRandom(7));
    const b = zipfSampler(1000, 1.0, seededRandom(7));
    expect(Array.from({ length: 100 }, a)).toEqual(Array.from({ length: 100 }, b));
  });

  it('gives the hottest rank its expected share', () => {
    const sample = zipfSampler(100_000, 1.2, seededRandom(1));
    let hot = 0;
    const n = 200_000;
    for (let i = 0; i < n; i++) if (sample() === 0) hot++;
    // The published figure for Zipf 1.2 over 1e5 keys is p1 ≈ 0.196.
    expect(zipfTopShare(100_000, 1.2)).toBeCloseTo(0.196, 2);
    expect(hot / n).toBeCloseTo(0.196, 1);
  });

  it('rejects a bad key count', () => {
    expect(() => zipfSampler(0, 1, Math.random)).toThrow(/positive integer/);
  });
});

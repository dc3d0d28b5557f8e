/**
 * Samples ranks 0..n-1 with P(rank) ∝ 1/(rank+1)^exponent (rank 0 is the hottest), by binary search over the
 * cumulative weights: O(n) memory once, O(log n) per sample.
 */
export function zipfSampler(n: number, exponent: number, random: () => number): () => number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`zipfSampler: n must be a positive integer, got ${n}`);
  const cdf = new Float64Array(n);
  let total = 0;
  for (let rank = 0; rank < n; rank++) {
    total += 1 / Math.pow(rank + 1, exponent);
    cdf[rank] = total;
  }
  return () => {
    const u = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** The probability of rank 0 (the hottest key's share of traffic). */
export function zipfTopShare(n: number, exponent: number): number {
  let total = 0;
  for (let rank = 0; rank < n; rank++) total += 1 / Math.pow(rank + 1, exponent);
  return 1 / total;
}

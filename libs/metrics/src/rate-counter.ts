/** What a counter saw over one interval. */
export interface RateSample {
  readonly fromMs: number;
  readonly toMs: number;
  readonly count: number;
  /** count ÷ interval seconds; 0 for an empty interval. */
  readonly perSec: number;
}

/** Per-second rate over an interval; `take` closes the interval and opens the next one. */
export function perSecond(count: number, fromMs: number, toMs: number): number {
  const ms = toMs - fromMs;
  return ms > 0 ? (count * 1000) / ms : 0;
}

/**
 * Counts events (records in, records out, dead letters) in the current interval, plus a running total.
 * `add` is one addition: call it once a batch with the batch size.
 */
export class RateCounter {
  private intervalCount = 0;
  private lifetimeCount = 0;
  private intervalStartMs: number;

  constructor(startMs: number) {
    this.intervalStartMs = startMs;
  }

  add(n = 1): void {
    this.intervalCount += n;
    this.lifetimeCount += n;
  }

  /** Count in the open interval. */
  get count(): number {
    return this.intervalCount;
  }

  /** Count since construction (never reset). */
  get total(): number {
    return this.lifetimeCount;
  }

  /** Closes the interval at `nowMs`, returns its count and rate, and starts the next interval there. */
  take(nowMs: number): RateSample {
    const sample: RateSample = {
      fromMs: this.intervalStartMs,
      toMs: nowMs,
      count: this.intervalCount,
      perSec: perSecond(this.intervalCount, this.intervalStartMs, nowMs),
    };
    this.intervalCount = 0;
    this.intervalStartMs = nowMs;
    return sample;
  }
}

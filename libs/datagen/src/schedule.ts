import type { Transaction, TransactionStream } from './transactions';

export interface PacingOptions {
  /** Events in total. */
  readonly count: number;
  /** Largest batch handed out at once (a producer sends each batch in one call). */
  readonly maxBatch?: number;
  /** Wall clock, epoch ms; the stream's startTime is taken as "now" when pacing starts. */
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * Hands out the stream's events in batches as their scheduled times come due. When the consumer falls behind, the
 * next batch holds everything already due (up to maxBatch) and the events keep their scheduled timestamps: a stall
 * shows up as latency downstream instead of slowing the schedule (no coordinated omission).
 */
export async function* paced(stream: TransactionStream, options: PacingOptions): AsyncGenerator<Transaction[]> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const maxBatch = options.maxBatch ?? 1_000;
  const start = stream.options.startTime;
  let next = 0;
  while (next < options.count) {
    const due = Math.min(options.count, stream.countBefore(now() - start + 1), next + maxBatch);
    if (due > next) {
      yield stream.range(next, due);
      next = due;
      continue;
    }
    await sleep(Math.max(1, stream.scheduledTime(next) - now()));
  }
}

/**
 * A weighted choice made per record without randomness or allocation: 4096 slots per choice, each target filling a
 * contiguous run in proportion to its weight, and a record's `sequence` (any integer stable for the record) picks a
 * slot through a golden-ratio (Weyl) sequence, so that even a short run of consecutive sequences lands in proportion
 * to the weights instead of by chance.
 */

const SLOT_BITS = 12;
/** Slots per choice: weights are honoured to 1/4096. */
export const SLOTS = 1 << SLOT_BITS;
/** 2^32 / golden ratio: consecutive multiples are as evenly spread over [0, 2^32) as any sequence can be. */
const WEYL = 0x9e3779b9;

/** The slot `sequence` picks, in [0, SLOTS). */
export function slotOf(sequence: number): number {
  return Math.imul(sequence | 0, WEYL) >>> (32 - SLOT_BITS);
}

/**
 * Fills `target` (SLOTS long) with `targets[i]` in contiguous runs sized by largest remainder, so the counts sum to
 * SLOTS exactly. Weights are non-negative and sum to 1 (the caller checks).
 */
export function fillWeightedSlots(target: Uint16Array, targets: readonly number[], weights: readonly number[]): void {
  const exact = weights.map((w) => w * SLOTS);
  const counts = exact.map(Math.floor);
  let left = SLOTS - counts.reduce((a, c) => a + c, 0);
  const byRemainder = exact.map((_, i) => i).sort((a, b) => exact[b] - counts[b] - (exact[a] - counts[a]) || a - b);
  for (let j = 0; left > 0; j = (j + 1) % byRemainder.length, left--) counts[byRemainder[j]]++;
  let at = 0;
  counts.forEach((count, i) => {
    target.fill(targets[i], at, at + count);
    at += count;
  });
}

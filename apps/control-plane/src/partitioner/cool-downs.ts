import type { MoveState } from '../moves/key-group-move';

/** One key group a move handed over, and when that move finished (epoch ms). */
export interface KeyGroupChange {
  readonly keyGroup: number;
  readonly atMs: number;
}

/**
 * planPartitioning's `lastChangedAtMs`: per key group the latest time it changed owner. Read from the moves made
 * (DONE), the partitioner's and the tenant's alike, rather than from decisions: a recommendation changes nothing, and a
 * failed move left its key groups where they were, so neither cools anything down.
 */
export function lastChangedAtMs(changes: readonly KeyGroupChange[]): Record<number, number> {
  const last: Record<number, number> = {};
  for (const { keyGroup, atMs } of changes) if (!(last[keyGroup] >= atMs)) last[keyGroup] = atMs;
  return last;
}

/** The operator's latest recorded decision, as far as continuing it matters. */
export interface PreviousDecision {
  readonly unfinished: boolean;
  /** The state of the move that carried it out; null when none did (recommended only, or declined). */
  readonly moveState: MoveState | null;
}

/**
 * planPartitioning's `continuing`: the previous plan stopped on its budget above the aim and its move was made, so
 * this one carries on down to the aim even inside the hysteresis band. A plan only recommended, or whose move failed,
 * was never made: the next one starts afresh at the band's upper edge.
 */
export function isContinuing(previous: PreviousDecision | null): boolean {
  return previous !== null && previous.unfinished && previous.moveState === 'DONE';
}

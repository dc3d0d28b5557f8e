/** What a subtask is doing: processing, blocked on downstream (output full), or waiting for input. */
export type ActivityState = 'busy' | 'backpressured' | 'idle';

/** Milliseconds per second of each state over one interval; the three sum to 1000 for a non-empty interval. */
export interface TimeShares {
  readonly intervalMs: number;
  readonly busyMsPerSec: number;
  readonly backpressuredMsPerSec: number;
  readonly idleMsPerSec: number;
}

const BUSY = 0;
const BACKPRESSURED = 1;
const IDLE = 2;

function stateCode(state: ActivityState): number {
  return state === 'busy' ? BUSY : state === 'backpressured' ? BACKPRESSURED : IDLE;
}

/**
 * Attributes every millisecond of an interval to exactly one state, like Flink's busyTimeMsPerSecond,
 * backPressuredTimeMsPerSecond and idleTimeMsPerSecond. The engine calls `enter` at each transition (a few
 * times a batch, never per record); the time since the previous mark goes to the state being left.
 *
 * Timestamps should come from one clock; if it steps backwards the step counts as zero time.
 */
export class TimeAccounting {
  private readonly spentMs = new Float64Array(3);
  private current: number;
  private lastMarkMs: number;
  private intervalStartMs: number;

  constructor(startMs: number, initial: ActivityState = 'idle') {
    this.current = stateCode(initial);
    this.lastMarkMs = startMs;
    this.intervalStartMs = startMs;
  }

  enter(state: ActivityState, nowMs: number): void {
    this.charge(nowMs);
    this.current = stateCode(state);
  }

  get state(): ActivityState {
    return this.current === BUSY ? 'busy' : this.current === BACKPRESSURED ? 'backpressured' : 'idle';
  }

  /** Closes the interval at `nowMs` (the current state keeps running into the next interval). */
  take(nowMs: number): TimeShares {
    this.charge(nowMs);
    const spent = this.spentMs;
    const total = spent[BUSY] + spent[BACKPRESSURED] + spent[IDLE];
    const scale = total > 0 ? 1000 / total : 0;
    const shares: TimeShares = {
      intervalMs: Math.max(0, nowMs - this.intervalStartMs),
      busyMsPerSec: spent[BUSY] * scale,
      backpressuredMsPerSec: spent[BACKPRESSURED] * scale,
      idleMsPerSec: spent[IDLE] * scale,
    };
    spent.fill(0);
    this.intervalStartMs = Math.max(this.intervalStartMs, nowMs);
    return shares;
  }

  private charge(nowMs: number): void {
    const elapsed = nowMs - this.lastMarkMs;
    if (elapsed > 0) this.spentMs[this.current] += elapsed;
    this.lastMarkMs = nowMs;
  }
}

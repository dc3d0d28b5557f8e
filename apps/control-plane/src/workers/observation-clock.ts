/** How many silent heartbeat intervals make a worker LOST. */
export const LOST_AFTER_INTERVALS = 3;

/**
 * Whatever the heartbeat interval, a worker is never LOST before this much silence: on a loaded machine a worker's
 * or the control plane's event loop stalls for 0.6–0.75 s, and a LOST restarts the worker's jobs elsewhere.
 */
export const LOST_FLOOR_MS = 3_000;

/** The silence after which a worker heartbeating every `heartbeatMs` is LOST (before any allowance). */
export function lostTimeoutMs(heartbeatMs: number): number {
  return Math.max(LOST_AFTER_INTERVALS * heartbeatMs, LOST_FLOOR_MS);
}

/** An ALIVE worker silent for longer than its timeout, by the database's clock: a candidate for LOST. */
export interface SilentWorker {
  readonly id: string;
  readonly heartbeatMs: number;
  /** Since its last applied event, by the database's clock. */
  readonly silentMs: number;
}

/**
 * Of the silent workers, those LOST: not one with an event still pending in the queue (it spoke; the control plane
 * has not heard it yet; 'all' when that cannot be known), and only for a silence this instance observed.
 */
export function lostAmong(silent: readonly SilentWorker[], pending: ReadonlySet<string> | 'all', clock: ObservationClock, now: number): SilentWorker[] {
  if (pending === 'all') return [];
  return silent.filter((w) => !pending.has(w.id) && clock.isLost(w.silentMs, w.heartbeatMs, now));
}

interface Span {
  /** When it ended (stall) or was noted (lag), on this process's clock. */
  readonly at: number;
  readonly ms: number;
}

/**
 * How much of a worker's silence this control-plane instance could actually observe. A silence is the worker's only
 * when the control plane was there to hear: while its own event loop stalled, heartbeats sat unread in Redis, and
 * after the stall they are applied late. So the time its timers fired late (stalls), and how long heartbeats took
 * from send to applied (lag, measured only for workers on this host, whose clock is ours), are deducted from a
 * silence before it is compared with the timeout. Durations only: the silence comes from the database's clock,
 * stalls and lags from this process's, and no instant is compared across the two.
 */
export class ObservationClock {
  private lastTick: number | undefined;
  private stalls: Span[] = [];
  private lags: Span[] = [];

  /**
   * @param tickMs how often tick() is called while the process is healthy
   * @param horizonMs how long stalls and lags are remembered (a silence longer than this is judged without
   *   the stalls before it)
   */
  constructor(
    readonly tickMs = 100,
    private readonly horizonMs = 600_000,
  ) {}

  /** Called by a timer every tickMs (and by each sweep): a longer gap since the last call is a stall. */
  tick(now: number): void {
    if (this.lastTick !== undefined) {
      const excess = now - this.lastTick - this.tickMs;
      // Timer jitter below half a tick is noise, not a stall.
      if (excess > this.tickMs / 2) this.stalls.push({ at: now, ms: excess });
    }
    this.lastTick = now;
    this.prune(now);
  }

  /** A heartbeat applied at `now` that was sent `lagMs` earlier (same host's clock). */
  noteLag(now: number, lagMs: number): void {
    if (lagMs <= 0) return;
    // One entry per tick's worth of time (the largest), so a big fleet's heartbeats do not pile up entries.
    const last = this.lags.at(-1);
    if (last && now - last.at < this.tickMs) {
      if (lagMs > last.ms) this.lags[this.lags.length - 1] = { at: last.at, ms: lagMs };
    } else {
      this.lags.push({ at: now, ms: lagMs });
    }
  }

  /** Of the `silentMs` before `now`, the part this instance could observe. */
  observedMs(silentMs: number, now: number): number {
    const from = now - silentMs;
    let unobserved = 0;
    for (const s of this.stalls) unobserved += Math.max(0, Math.min(s.at, now) - Math.max(s.at - s.ms, from));
    // A heartbeat sent within the pipeline's current lag may still be on its way: the largest lag seen during the
    // silence is time the worker is given on top.
    let lag = 0;
    for (const l of this.lags) if (l.at >= from && l.ms > lag) lag = l.ms;
    return silentMs - unobserved - lag;
  }

  /** Whether a worker silent for `silentMs` (database clock) is LOST as this instance can judge it. */
  isLost(silentMs: number, heartbeatMs: number, now: number): boolean {
    return this.observedMs(silentMs, now) > lostTimeoutMs(heartbeatMs);
  }

  private prune(now: number): void {
    const since = now - this.horizonMs;
    if (this.stalls.length && this.stalls[0].at < since) this.stalls = this.stalls.filter((s) => s.at >= since);
    if (this.lags.length && this.lags[0].at < since) this.lags = this.lags.filter((l) => l.at >= since);
  }
}

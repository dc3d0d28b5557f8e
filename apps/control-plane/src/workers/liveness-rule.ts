/** How many silent heartbeat intervals make a worker LOST. */
export const LOST_AFTER_INTERVALS = 3;

/**
 * Whatever the heartbeat interval, a worker is never LOST before this much silence: on a loaded machine a worker's
 * event loop stalls for 0.6–0.75 s (its heartbeats are then sent late), and a LOST restarts its jobs elsewhere.
 */
export const LOST_FLOOR_MS = 3_000;

/** The silence after which a worker heartbeating every `heartbeatMs` is LOST. */
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
 * Of the silent workers, those LOST. A worker with an event still pending in the worker-events queue spoke and the
 * control plane has not applied it yet (it stalled, is behind, or is retrying): its silence is the control plane's,
 * not its own. `pending` is 'all' when that cannot be known (backlog too long, Redis not answering): nobody then.
 */
export function lostAmong(silent: readonly SilentWorker[], pending: ReadonlySet<string> | 'all'): SilentWorker[] {
  if (pending === 'all') return [];
  return silent.filter((w) => !pending.has(w.id) && w.silentMs > lostTimeoutMs(w.heartbeatMs));
}

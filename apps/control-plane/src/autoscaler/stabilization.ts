/**
 * The autoscaler's memory between looks, and the windows it applies: pure bookkeeping, no I/O, the clock passed in.
 * Stored per deployment (deployments.autoscaler_state) and written under the deployment's row lock at every look.
 */
export interface AutoscalerState {
  /** The need being stabilized; null when the last look found none. */
  readonly need: StabilizedNeed | null;
  /** The last source backlog seen, so the next look reads its growth (the ingest rate beyond what is read). */
  readonly backlog: { readonly atMs: number; readonly records: number } | null;
}

export interface StabilizedNeed {
  readonly direction: 'up' | 'down';
  /** When this need was first seen, unbroken since. */
  readonly sinceMs: number;
  /**
   * The parallelism it would act on: the smallest seen since for a need up, the largest for a need down (as
   * Kubernetes' HPA stabilizes), so a single noisy look neither overshoots up nor undershoots down.
   */
  readonly parallelism: number;
}

export const EMPTY_AUTOSCALER_STATE: AutoscalerState = { need: null, backlog: null };

export interface StabilizationWindows {
  readonly scaleUpWindowMs: number;
  readonly scaleDownWindowMs: number;
}

export interface Stabilized {
  readonly need: StabilizedNeed | null;
  /** The parallelism to act on now; null while the need is younger than its window (or there is none). */
  readonly due: number | null;
  /** How long the need has held, ms (0 without one). */
  readonly heldMs: number;
  /** Its window, ms (0 without one). */
  readonly windowMs: number;
}

/**
 * One look's proposal against the need carried: a proposal in the same direction keeps the need's age and narrows its
 * parallelism; another direction (or none) starts over. `proposed` null means no need this look.
 */
export function stabilize(carried: StabilizedNeed | null, proposed: { readonly direction: 'up' | 'down'; readonly parallelism: number } | null, nowMs: number, windows: StabilizationWindows): Stabilized {
  if (!proposed) return { need: null, due: null, heldMs: 0, windowMs: 0 };
  const same = carried !== null && carried.direction === proposed.direction;
  const need: StabilizedNeed = same
    ? {
        direction: carried.direction,
        sinceMs: carried.sinceMs,
        parallelism: proposed.direction === 'up' ? Math.min(carried.parallelism, proposed.parallelism) : Math.max(carried.parallelism, proposed.parallelism),
      }
    : { direction: proposed.direction, sinceMs: nowMs, parallelism: proposed.parallelism };
  const windowMs = need.direction === 'up' ? windows.scaleUpWindowMs : windows.scaleDownWindowMs;
  const heldMs = nowMs - need.sinceMs;
  return { need, due: heldMs >= windowMs ? need.parallelism : null, heldMs, windowMs };
}

/**
 * How long the cool-down still holds after the deployment's last change of parallelism or restart (null: there was
 * none), 0 once over. During it nothing is decided and no need accumulates: the figures describe the change (key
 * groups moving, a restored run catching up), not the load.
 */
export function coolDownLeftMs(lastChangeAtMs: number | null, nowMs: number, cooldownMs: number): number {
  if (lastChangeAtMs === null) return 0;
  return Math.max(0, lastChangeAtMs + cooldownMs - nowMs);
}

/** A decision that repeats the latest one (same kind, parallelism and reason code) within this long is not recorded again. */
export function isRepeat(
  latest: { readonly kind: string; readonly toParallelism: number | null; readonly code: string | null; readonly decidedAtMs: number } | null,
  next: { readonly kind: string; readonly toParallelism: number; readonly code: string },
  nowMs: number,
  repeatAfterMs: number,
): boolean {
  if (!latest) return false;
  return latest.kind === next.kind && latest.toParallelism === next.toParallelism && latest.code === next.code && nowMs - latest.decidedAtMs < repeatAfterMs;
}

/**
 * What every planning step needs beside the sheet: the policy, the clock and the cool-downs, and whether the
 * operator's state can be split at all. Internal to the planner.
 */
import type { PartitioningPolicy } from './policy';

export interface PlanContext {
  readonly policy: PartitioningPolicy;
  readonly nowMs: number;
  /** key group → epoch ms it last moved, split or folded back (absent: never, or long ago). */
  readonly lastChangedAtMs: Readonly<Record<number, number>>;
  /** The operator's keyed state merges partials (count, sum, min, max, window aggregates, declared merges). */
  readonly splittable: boolean;
}

/** When the key group's cool-down ends, or null when it is not cooling down. */
export function coolingUntil(ctx: PlanContext, keyGroup: number): number | null {
  const last = ctx.lastChangedAtMs[keyGroup];
  if (last === undefined) return null;
  const until = last + ctx.policy.coolDownMs;
  return until > ctx.nowMs ? until : null;
}

/** A number for a reason line: 3 significant figures, no exponent. */
export function fmt(value: number): string {
  return Number(value.toPrecision(3)).toString();
}

import type { AutoscalerPolicy } from './autoscaler-settings';
import type { OperatorNeed, OperatorRates } from './ds2';

/** Above target utilization + this, the subtasks are short of capacity: scale up. */
export const SCALE_UP_BAND = 0.1;
/** Below target utilization − this, they have capacity to spare: scale down (the gap between is the band held still). */
export const SCALE_DOWN_BAND = 0.2;

/** Why a need is left alone: to the partitioner (imbalance, hot-key), or for want of slots (fleet) or room (bounds). */
export const HOLD_CODES = ['imbalance', 'hot-key', 'fleet', 'bounds'] as const;
export type HoldCode = (typeof HOLD_CODES)[number];

/** The latency objective as the autoscaler reads it: the deployment's tightest SLO against the latest latency. */
export interface SloPressure {
  readonly sloId: string;
  readonly name: string;
  readonly percentile: string;
  readonly thresholdMs: number;
  /** The latest interval's event-time latency at the SLO's percentile, over every subtask's histogram; null: no sample. */
  readonly latencyMs: number | null;
  /** The SLO's own evaluation (NO_DATA, OK, BREACHED) and burn rate. */
  readonly state: string;
  readonly burnRate: number | null;
  /** latencyMs above sloFraction × thresholdMs: act before the objective is missed. */
  readonly pressure: boolean;
}

/** A hot key the partitioner found and may not split (not-mergeable): no number of subtasks splits one key. */
export interface PartitionerHotKey {
  readonly decisionId: string;
  readonly key: string;
  readonly keyGroup: number;
  readonly share: number;
}

export interface ProposalInput {
  /** The run's process count: the parallelism every decision is from. */
  readonly processes: number;
  readonly operators: readonly { readonly rates: OperatorRates; readonly need: OperatorNeed }[];
  readonly policy: AutoscalerPolicy;
  readonly slo: SloPressure | null;
  /** The partitioner's latest not-mergeable hot key of an operator, if any. */
  readonly hotKeyOf: (operatorId: string) => PartitionerHotKey | null;
  readonly fleetFreeSlots: number;
}

export type Proposal =
  | { readonly kind: 'none'; readonly operatorId: string | null; readonly why: string }
  | {
      readonly kind: 'scale';
      readonly direction: 'up' | 'down';
      readonly operatorId: string;
      readonly parallelism: number;
      /** What the figures ask for before the bounds and the fleet. */
      readonly wanted: number;
      readonly limitedBy: 'fleet' | 'bounds' | null;
      readonly sloDriven: boolean;
      readonly why: string;
    }
  | { readonly kind: 'hold'; readonly code: HoldCode; readonly operatorId: string; readonly wanted: number; readonly why: string };

const pct = (x: number) => `${(x * 100).toFixed(0)}%`;

/**
 * What the figures ask of the deployment this look, before stabilization and cool-down. Weir rescales a run by its
 * process count (process i runs subtask i of every stage), so the answer is one parallelism n for the most demanding
 * keyed operator. In order:
 * 1. up when an operator's utilization at the target rate is above target + 0.1 (n meets the target at the target
 *    utilization), or when the SLO is under pressure while that operator is busier than the target utilization (one
 *    more subtask at least, though the rates alone would not ask);
 * 2. a hot subtask (busy above target + 0.1) while its operator's utilization is not: more subtasks would not cool it,
 *    so it is left to the partitioner (a hot key it may not split is named);
 * 3. down when every operator is below target − 0.2 and the SLO is not under pressure, to the smallest n whose
 *    predicted utilization stays at the target and whose busiest subtask stays below the up threshold (headroom, so a
 *    down-step is never followed by an up-step at the same load);
 * otherwise nothing. Up is bounded by the policy's maximum and the fleet's free slots, down by its minimum.
 */
export function proposeScaling(input: ProposalInput): Proposal {
  const { processes: p, policy } = input;
  if (input.operators.length === 0) return { kind: 'none', operatorId: null, why: 'no keyed operator reported figures' };
  const upAbove = policy.targetUtilization + SCALE_UP_BAND;
  const downBelow = policy.targetUtilization - SCALE_DOWN_BAND;
  const hotBusy = upAbove * 1000;
  const driver = [...input.operators].sort((a, b) => b.need.utilization - a.need.utilization)[0];
  const { rates, need } = driver;
  const operatorId = rates.operatorId;
  const at = `operator ${operatorId} at ${pct(need.utilization)} utilization for ${need.targetRatePerSec.toFixed(0)} records/s over ${p} subtask${p === 1 ? '' : 's'}`;

  const byRates = need.utilization > upAbove ? Math.max(...input.operators.map((o) => o.need.parallelism)) : null;
  const slo = input.slo;
  const sloDriven = slo !== null && slo.pressure && rates.busyMsPerSec.mean >= policy.targetUtilization * 1000;
  if (byRates !== null || sloDriven) {
    const wanted = Math.max(byRates ?? 0, sloDriven ? p + 1 : 0);
    const why = byRates !== null ? `${at}: above ${pct(upAbove)}; ${wanted} subtasks meet it at ${pct(policy.targetUtilization)}` : `${sloLine(slo!, policy.sloFraction)} while ${operatorId} is ${pct(rates.busyMsPerSec.mean / 1000)} busy: one more subtask before the objective is missed`;
    const ceiling = Math.min(policy.maxParallelism, p + input.fleetFreeSlots);
    const n = Math.min(wanted, ceiling);
    if (n <= p) {
      const code: HoldCode = policy.maxParallelism <= p ? 'bounds' : 'fleet';
      const held = code === 'bounds' ? `already at the maximum parallelism ${policy.maxParallelism}` : `the fleet has ${input.fleetFreeSlots} free slot${input.fleetFreeSlots === 1 ? '' : 's'} for ${wanted - p} more process${wanted - p === 1 ? '' : 'es'}`;
      return { kind: 'hold', code, operatorId, wanted, why: `${why}; held: ${held}` };
    }
    const limitedBy = n < wanted ? (n === policy.maxParallelism ? 'bounds' : 'fleet') : null;
    return { kind: 'scale', direction: 'up', operatorId, parallelism: n, wanted, limitedBy, sloDriven: byRates === null, why: limitedBy ? `${why}; ${n} as the ${limitedBy === 'fleet' ? "fleet's free slots" : 'maximum'} allow${limitedBy === 'fleet' ? '' : 's'}` : why };
  }

  const hot = input.operators.find((o) => o.rates.busyMsPerSec.max >= hotBusy);
  if (hot) {
    const busiest = `subtask ${hot.rates.busyMsPerSec.maxSubtask} of ${hot.rates.operatorId} is ${pct(hot.rates.busyMsPerSec.max / 1000)} busy while the mean is ${pct(hot.rates.busyMsPerSec.mean / 1000)}`;
    const key = input.hotKeyOf(hot.rates.operatorId);
    if (key) {
      return {
        kind: 'hold',
        code: 'hot-key',
        operatorId: hot.rates.operatorId,
        wanted: p,
        why: `${busiest}: hot key "${key.key}" (key group ${key.keyGroup}, ${pct(key.share)} of records), whose split the partitioner declined as not mergeable (decision ${key.decisionId}); more subtasks cannot split a key, so it is left to the partitioner`,
      };
    }
    return { kind: 'hold', code: 'imbalance', operatorId: hot.rates.operatorId, wanted: p, why: `${busiest}: an imbalance more subtasks would not fix, left to the partitioner` };
  }

  if (p > policy.minParallelism && input.operators.every((o) => o.need.utilization < downBelow) && !(slo?.pressure ?? false)) {
    const byNeeds = Math.max(...input.operators.map((o) => o.need.parallelism));
    const wanted = Math.max(policy.minParallelism, byNeeds);
    // The smallest n at which every operator stays at the target utilization and its busiest subtask below the up
    // threshold: headroom, so the step down is not undone by a step up at the same load.
    const fits = (n: number) =>
      input.operators.every((o) => {
        const scale = o.rates.recordsInPerSec > 0 ? o.need.targetRatePerSec / o.rates.recordsInPerSec : 1;
        return (o.need.utilization * p) / n <= policy.targetUtilization + 1e-9 && ((o.rates.busyMsPerSec.max / 1000) * scale * p) / n < upAbove;
      });
    for (let n = Math.min(wanted, p - 1); n < p; n++) {
      if (!fits(n)) continue;
      const limitedBy = n === policy.minParallelism && byNeeds < n ? 'bounds' : null;
      return { kind: 'scale', direction: 'down', operatorId, parallelism: n, wanted, limitedBy, sloDriven: false, why: `${at}: below ${pct(downBelow)}; ${n} subtasks meet it at ${pct((need.utilization * p) / n)}` };
    }
    return { kind: 'none', operatorId, why: `${at}: below ${pct(downBelow)}, but fewer subtasks would need scaling up again` };
  }
  return { kind: 'none', operatorId, why: `${at}: within ${pct(downBelow)}–${pct(upAbove)}` };
}

function sloLine(slo: SloPressure, fraction: number): string {
  return `SLO ${slo.name}: ${slo.percentile} event-time latency ${(slo.latencyMs ?? 0).toFixed(0)} ms is above ${pct(fraction)} of its ${slo.thresholdMs} ms threshold`;
}

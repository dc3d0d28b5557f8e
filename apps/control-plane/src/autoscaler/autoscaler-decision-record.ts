import type { Parallelism } from '../deployments/deployment';
import type { ParallelismInput } from '../deployments/dto/deployment-input';
import type { DecidingMode, DecisionKind, Detection, PlannedDecision } from '../partitioner/scaling-decision';
import type { OperatorFigures } from './autoscaler-inputs';
import type { AutoscalerPolicy } from './autoscaler-settings';
import { loadImbalance, type SourceDemand } from './ds2';
import type { HoldCode, Proposal, SloPressure } from './scaling-proposal';
import type { Stabilized } from './stabilization';

/** The autoscaler's figures as a decision stores them (`inputs`): a plain JSON object, read back as it was written. */
export type AutoscalerInputs = {
  readonly processes: number;
  readonly operators: readonly {
    readonly operatorId: string;
    readonly subtasks: number;
    readonly recordsInPerSec: number;
    readonly busyMsPerSec: { readonly mean: number; readonly max: number; readonly maxSubtask: number };
    readonly trueRatePerSubtask: number | null;
    readonly measuredSubtasks: number;
    readonly targetRatePerSec: number;
    readonly utilization: number;
    readonly parallelism: number;
  }[];
  readonly source: SourceDemand & { readonly catchUpMs: number };
  readonly slo: SloPressure | null;
  readonly policy: AutoscalerPolicy;
  readonly stabilization: { readonly direction: 'up' | 'down' | null; readonly heldMs: number; readonly windowMs: number };
  readonly fleet: { readonly slotsNeeded: number; readonly slotsFree: number; readonly liveWorkers: number };
  /** What the figures ask for, before the bounds and the fleet. */
  readonly wanted: number;
  readonly hold: HoldCode | null;
  /** The verdict's code (rates, slo, or the hold's): what makes two decisions the same one. */
  readonly code?: string;
  readonly fromMs: number;
  readonly toMs: number;
};

/** What a recorded proposal is: SCALE_UP, SCALE_DOWN or HOLD, to which parallelism, and its repeat code. */
export interface AutoscalerVerdict {
  readonly kind: Extract<DecisionKind, 'SCALE_UP' | 'SCALE_DOWN' | 'HOLD'>;
  readonly toParallelism: number;
  /** Two decisions with the same kind, parallelism and code are the same decision (one row per cool-down). */
  readonly code: string;
}

export function verdictOf(proposal: Exclude<Proposal, { kind: 'none' }>, processes: number): AutoscalerVerdict {
  if (proposal.kind === 'hold') return { kind: 'HOLD', toParallelism: processes, code: proposal.code };
  return { kind: proposal.direction === 'up' ? 'SCALE_UP' : 'SCALE_DOWN', toParallelism: proposal.parallelism, code: proposal.sloDriven ? 'slo' : 'rates' };
}

export function autoscalerInputsOf(args: {
  readonly processes: number;
  readonly operators: readonly OperatorFigures[];
  readonly source: SourceDemand;
  readonly slo: SloPressure | null;
  readonly policy: AutoscalerPolicy;
  readonly stabilized: Stabilized;
  readonly fleet: { readonly free: number; readonly live: number };
  readonly proposal: Exclude<Proposal, { kind: 'none' }>;
  readonly fromMs: number;
  readonly toMs: number;
}): AutoscalerInputs {
  const { proposal, processes } = args;
  const wanted = proposal.wanted;
  return {
    processes,
    operators: args.operators.map(({ rates, need }) => ({
      operatorId: rates.operatorId,
      subtasks: rates.subtasks,
      recordsInPerSec: rates.recordsInPerSec,
      busyMsPerSec: rates.busyMsPerSec,
      trueRatePerSubtask: rates.trueRatePerSubtask,
      measuredSubtasks: rates.measuredSubtasks,
      targetRatePerSec: need.targetRatePerSec,
      utilization: need.utilization,
      parallelism: need.parallelism,
    })),
    source: { ...args.source, catchUpMs: args.policy.catchUpMs },
    slo: args.slo,
    policy: args.policy,
    stabilization: { direction: args.stabilized.need?.direction ?? null, heldMs: args.stabilized.heldMs, windowMs: args.stabilized.windowMs },
    fleet: { slotsNeeded: Math.max(0, wanted - processes), slotsFree: args.fleet.free, liveWorkers: args.fleet.live },
    wanted,
    hold: proposal.kind === 'hold' ? proposal.code : null,
    fromMs: args.fromMs,
    toMs: args.toMs,
  };
}

/**
 * The decision's reason sentence: what was seen, what is recommended or done, and, in mode auto, what was asked for.
 * Capped as the table caps it.
 */
export function describeScaling(proposal: Exclude<Proposal, { kind: 'none' }>, verdict: AutoscalerVerdict, processes: number, mode: DecidingMode, stabilized: Stabilized): string {
  const held = stabilized.windowMs > 0 ? ` (held ${Math.round(stabilized.heldMs / 1000)} s, window ${Math.round(stabilized.windowMs / 1000)} s)` : '';
  const action =
    verdict.kind === 'HOLD'
      ? 'holding the parallelism'
      : `${mode === 'auto' ? 'rescaling live' : 'recommends rescaling'} ${processes} → ${verdict.toParallelism} subtasks${held}`;
  return `${proposal.why}; ${action}`.slice(0, 4000);
}

/**
 * The columns the partitioner fills with its plan, filled with what the autoscaler has: no moves or declined actions;
 * the most demanding operator's records in per subtask now (before), spread evenly over the recommended parallelism at
 * the target rate (after), and its even share now (fair). The imbalance is that operator's max ÷ mean, which a
 * rescale leaves as it is (contiguous ranges, then the partitioner's moves).
 */
export function plannedOfScaling(operator: OperatorFigures, toParallelism: number): { decision: PlannedDecision; detection: Detection; imbalance: number } {
  const { rates, need } = operator;
  return {
    decision: {
      moves: [],
      declined: [],
      loadsBefore: [...rates.subtaskRates],
      loadsAfter: new Array<number>(toParallelism).fill(need.targetRatePerSec / toParallelism),
      fairLoads: new Array<number>(rates.subtasks).fill(rates.recordsInPerSec / rates.subtasks),
    },
    detection: { overloadedSubtasks: [], hotKeys: [] },
    imbalance: loadImbalance(rates),
  };
}

/**
 * The parallelism a rescale to n asks for: Weir rescales a run by its process count, so every operator as wide as the
 * run (the keyed stages and the Kafka sources that follow it live, and the default if it is as wide) goes to n; an
 * operator the tenant set narrower keeps its width, capped at n.
 */
export function uniformParallelism(current: Parallelism, runWidths: Readonly<Record<string, number>>, processes: number, n: number): ParallelismInput {
  const operators: Record<string, number> = {};
  for (const [id, width] of Object.entries(runWidths)) operators[id] = width === processes ? n : Math.min(width, n);
  return { default: current.default === processes ? n : Math.min(current.default, n), operators };
}

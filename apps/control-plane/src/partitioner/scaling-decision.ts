import { randomBytes } from 'node:crypto';
import type { ReportedKeySplit } from '@weir/metrics';
import type { PartitionerSettings } from '../scaling/scaling-policy';
import type { MoveCostBudget } from './move-cost';
import type { DeclinedAction, FoldBack as PlannedFoldBack, KeyGroupMove as PlannedKeyGroupMove, KeySplit as PlannedKeySplit } from '@weir/partitioner';

/**
 * A decision of the dynamic partitioner for one keyed operator of a running deployment, or of the autoscaler for the
 * whole deployment, as recorded (deployment_scaling_decisions): what it was decided on, what it flagged, what it does
 * and what it declined, and in mode auto what carries it out (the partitioner's key-group move; the autoscaler's
 * pending parallelism, rescaled live by the reconciler).
 */
export const PARTITIONER_DECISION_KINDS = ['MOVE_KEY_GROUPS', 'SPLIT_KEYS', 'DECLINED'] as const;
/** SCALE_UP / SCALE_DOWN: a parallelism recommended (mode auto: asked for); HOLD: a need left alone, with why. */
export const AUTOSCALER_DECISION_KINDS = ['SCALE_UP', 'SCALE_DOWN', 'HOLD'] as const;
export const DECISION_KINDS = [...PARTITIONER_DECISION_KINDS, ...AUTOSCALER_DECISION_KINDS] as const;
export type DecisionKind = (typeof DECISION_KINDS)[number];
export const DECISION_SOURCES = ['partitioner', 'autoscaler'] as const;
export type DecisionSource = (typeof DECISION_SOURCES)[number];

/** The partitioner's modes that decide (off never does). */
export type DecidingMode = 'recommend' | 'auto';

/** A subtask whose load is above the policy's `actAbove` × its fair load. */
export interface OverloadedSubtask {
  readonly subtask: number;
  /** Records/s routed to it. */
  readonly load: number;
  /** Its share of the operator's load, in proportion to capacity (records/s). */
  readonly fairLoad: number;
  /** load ÷ fairLoad. */
  readonly ratio: number;
  /** Records/s it can process when busy all the time; null when not measured. */
  readonly capacity: number | null;
  /** Its heaviest key groups, heaviest first, with their rates. */
  readonly topKeyGroups: readonly { readonly keyGroup: number; readonly rate: number }[];
}

/** A key carrying at least half a subtask's fair load: what moves alone cannot balance around for long. */
export interface HotKey {
  readonly key: string;
  readonly keyGroup: number;
  readonly rate: number;
  /** Its share of the operator's records. */
  readonly share: number;
  /** rate ÷ the mean fair load of a subtask. */
  readonly ofFairLoad: number;
  /** How much of the rate may be the sketch's overestimate (records/s). */
  readonly error: number;
  /** The subtask owning its key group. */
  readonly subtask: number;
}

export interface Detection {
  readonly overloadedSubtasks: readonly OverloadedSubtask[];
  readonly hotKeys: readonly HotKey[];
}

/** What the decision was planned on: the load model's figures and where they came from. */
export interface DecisionInputs {
  /** key group → records/s, over the operator's subtasks. */
  readonly keyGroupRates: readonly number[];
  /** subtask → records/s it can process when busy all the time (null: not measured, the others' mean is used). */
  readonly capacities: readonly (number | null)[];
  /** The heaviest keys the sketches name, merged over subtasks. */
  readonly heavyKeys: readonly { readonly key: string; readonly keyGroup: number; readonly rate: number; readonly error: number }[];
  /** key group → subtask, the run's routing the load was measured under. */
  readonly owners: readonly number[];
  /** key group → state bytes a move hands over, as estimated from the latest checkpoint (0 where unknown). */
  readonly stateBytes: readonly number[];
  /** Where the state bytes came from, in words (a checkpoint id, or unknown). */
  readonly stateBytesSource: string;
  /** The snapshots' wall-clock span (earliest fromMs, latest toMs), epoch ms. */
  readonly fromMs: number;
  readonly toMs: number;
  readonly subtasks: number;
  /** The deployment's partitioner policy at the look (scaling-policy.ts); absent on decisions recorded before it existed. */
  readonly policy?: PartitionerSettings;
  /** The key groups the look could move after the latest move's measured pause (move-cost.ts); absent likewise. */
  readonly moveCost?: MoveCostBudget;
}

/** planPartitioning's decision as stored: splits and fold-backs stay empty while splitting is not wired (splittable false). */
export interface PlannedDecision {
  readonly moves: readonly PlannedKeyGroupMove[];
  /** Hot keys of a splittable window it splits (new, widened or re-weighted); absent in rows from before splits. */
  readonly splits?: readonly PlannedKeySplit[];
  readonly foldBacks?: readonly PlannedFoldBack[];
  /** In mode auto, when it changes splits: the operator's whole split table it sets (key groups as parts). */
  readonly keySplits?: readonly ReportedKeySplit[];
  readonly declined: readonly DeclinedAction[];
  readonly loadsBefore: readonly number[];
  readonly loadsAfter: readonly number[];
  readonly fairLoads: readonly number[];
}

export interface ScalingDecision {
  readonly tenantId: string;
  readonly deploymentId: string;
  readonly decisionId: string;
  readonly runNo: number;
  readonly source: DecisionSource;
  readonly operatorId: string;
  readonly mode: DecidingMode;
  readonly kind: DecisionKind;
  readonly reason: string;
  readonly keyGroups: readonly number[];
  readonly imbalanceBefore: number;
  readonly imbalanceAfter: number;
  readonly unfinished: boolean;
  readonly detection: Detection;
  readonly decision: PlannedDecision;
  /** The partitioner's load model (DecisionInputs), or the autoscaler's figures (a JSON object of its own shape). */
  readonly inputs: DecisionInputs | Readonly<Record<string, unknown>>;
  /** The key-group move carrying it out (mode auto); null when recommended only or declined. */
  readonly moveId: string | null;
  /** The autoscaler's: the run's process count when decided and the parallelism recommended (equal for a HOLD); null for the partitioner's. */
  readonly fromParallelism: number | null;
  readonly toParallelism: number | null;
  readonly decidedAt: Date;
}

/** `s` + 12 hex digits of epoch ms + 12 random: ids sort by decision time, so the newest-first list is a key order. */
export function newDecisionId(now = Date.now()): string {
  return `s${now.toString(16).padStart(12, '0').slice(-12)}${randomBytes(6).toString('hex')}`;
}

export const DECISION_ID_PATTERN = /^s[0-9a-f]{24}$/;

/** Who the partitioner's key-group moves are requested by (where a tenant's carry their API key id). */
export const PARTITIONER_REQUESTER = 'partitioner';

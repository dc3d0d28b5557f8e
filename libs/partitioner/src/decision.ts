/**
 * What one planning round decided, as plain data: stored with its inputs and pushed to the user, so every action
 * and every action not taken carries the numbers it was decided on (rates in records/s, loads as records/s and as
 * multiples of the subtask's fair share).
 */
import type { PlannedMove } from '@weir/engine';
import type { SplitAssignment } from './layout';

/** One key group handed from one subtask to another: the engine's live move (`MovedKeyGroup`). */
export interface KeyGroupMove extends PlannedMove {
  readonly reason: string;
  readonly evidence: {
    readonly keyGroupRate: number;
    readonly stateBytes: number;
    /** Source and destination load (records/s) before and after this move, in plan order. */
    readonly fromLoad: number;
    readonly fromLoadAfter: number;
    readonly toLoad: number;
    readonly toLoadAfter: number;
    readonly fromFairLoad: number;
    readonly toFairLoad: number;
  };
}

/**
 * A hot key routed to several subtasks. `new`: it was whole; `widen`: it was split over fewer subtasks (its partials
 * stay where they are, new ones start empty); `reweight`: same subtasks, other weights (no state moves).
 */
export interface KeySplit extends SplitAssignment {
  readonly change: 'new' | 'widen' | 'reweight';
  readonly reason: string;
  readonly evidence: {
    readonly keyRate: number;
    /** The key's share of the operator's records. */
    readonly keyShare: number;
    readonly keyGroupRate: number;
    /** The load one subtask may carry at the aim (aimBelow × fair share), the mean over subtasks. */
    readonly aimLoad: number;
    readonly previousSubtasks: readonly number[];
    readonly previousWeights: readonly number[];
  };
}

/** A split key that cooled down: its partials merge into one, at its key group's owner. */
export interface FoldBack {
  readonly key: string;
  readonly keyGroup: number;
  readonly toSubtask: number;
  readonly fromSubtasks: readonly number[];
  readonly reason: string;
  readonly evidence: { readonly keyRate: number; readonly foldBelowRate: number };
}

export type DeclineReason = 'hysteresis' | 'budget' | 'cool-down' | 'not-mergeable' | 'no-improving-move';

/** Something the planner would have done and did not, with why. */
export interface DeclinedAction {
  readonly action: 'rebalance' | 'move' | 'split' | 'fold-back';
  readonly reason: DeclineReason;
  readonly keyGroup?: number;
  readonly key?: string;
  readonly detail: string;
  readonly evidence: Readonly<Record<string, number>>;
}

export interface PartitioningDecision {
  /** True when the decision holds at least one action (move, split or fold-back). */
  readonly acted: boolean;
  /** The budget stopped it above the aim: pass `continuing: true` with the next input so that one carries on. */
  readonly unfinished: boolean;
  /** max over subtasks of load ÷ fair load (fair: the operator's load shared in proportion to capacity). */
  readonly imbalanceBefore: number;
  /** The same, predicted once every action is applied. */
  readonly imbalanceAfter: number;
  readonly loadsBefore: readonly number[];
  readonly loadsAfter: readonly number[];
  readonly fairLoads: readonly number[];
  /** In the order to make them: each one lowers the load of the subtask it leaves. */
  readonly moves: readonly KeyGroupMove[];
  readonly splits: readonly KeySplit[];
  readonly foldBacks: readonly FoldBack[];
  readonly declined: readonly DeclinedAction[];
}

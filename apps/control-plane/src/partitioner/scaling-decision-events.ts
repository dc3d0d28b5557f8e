import { Injectable } from '@nestjs/common';
import { EventPublisher } from '../events/events';
import type { Detection, ScalingDecision } from './scaling-decision';

/**
 * What a decision publishes on `weir:<prefix>:scaling:<tenantId>:<deploymentId>` once recorded (the
 * `scalingDecisions` subscription), the partitioner's and the autoscaler's alike. `fromParallelism`/`toParallelism`
 * are the autoscaler's (null for the partitioner's decisions, which keep the parallelism).
 */
export interface ScalingDecisionMessage {
  readonly deploymentId: string;
  readonly decisionId: string;
  readonly source: string;
  readonly kind: string;
  readonly reason: string;
  readonly operatorId: string | null;
  readonly runNo: number;
  readonly mode: string;
  readonly moveId: string | null;
  readonly imbalanceBefore: number;
  readonly imbalanceAfter: number;
  readonly unfinished: boolean;
  readonly moves: readonly { readonly keyGroup: number; readonly fromSubtask: number; readonly toSubtask: number; readonly reason: string }[];
  readonly declined: readonly { readonly action: string; readonly reason: string; readonly keyGroup: number | null; readonly key: string | null; readonly detail: string }[];
  readonly splits?: readonly PlannedSplitMessage[];
  readonly foldBacks?: readonly PlannedFoldBackMessage[];
  readonly detection: Detection;
  readonly inputs: ScalingDecision['inputs'];
  readonly fromParallelism: number | null;
  readonly toParallelism: number | null;
  readonly keyGroups: readonly number[];
  /** Epoch ms. */
  readonly at: number;
}

export interface PlannedSplitMessage {
  readonly key: string;
  readonly keyGroup: number;
  readonly subtasks: readonly number[];
  readonly weights: readonly number[];
  readonly change: string;
  readonly reason: string;
}

export interface PlannedFoldBackMessage {
  readonly key: string;
  readonly keyGroup: number;
  readonly toSubtask: number;
  readonly fromSubtasks: readonly number[];
  readonly reason: string;
}

export function toDecisionMessage(d: ScalingDecision): ScalingDecisionMessage {
  return {
    deploymentId: d.deploymentId,
    decisionId: d.decisionId,
    source: d.source,
    kind: d.kind,
    reason: d.reason,
    operatorId: d.operatorId,
    runNo: d.runNo,
    mode: d.mode,
    moveId: d.moveId,
    imbalanceBefore: d.imbalanceBefore,
    imbalanceAfter: d.imbalanceAfter,
    unfinished: d.unfinished,
    moves: d.decision.moves.map((m) => ({ keyGroup: m.keyGroup, fromSubtask: m.fromSubtask, toSubtask: m.toSubtask, reason: m.reason })),
    declined: d.decision.declined.map((x) => ({ action: x.action, reason: x.reason, keyGroup: x.keyGroup ?? null, key: x.key ?? null, detail: x.detail })),
    splits: (d.decision.splits ?? []).map((s) => ({ key: s.key, keyGroup: s.keyGroup, subtasks: [...s.subtasks], weights: [...s.weights], change: s.change, reason: s.reason })),
    foldBacks: (d.decision.foldBacks ?? []).map((f) => ({ key: f.key, keyGroup: f.keyGroup, toSubtask: f.toSubtask, fromSubtasks: [...f.fromSubtasks], reason: f.reason })),
    detection: d.detection,
    inputs: d.inputs,
    fromParallelism: d.fromParallelism,
    toParallelism: d.toParallelism,
    keyGroups: d.keyGroups,
    at: d.decidedAt.getTime(),
  };
}

/**
 * Decisions out to GraphQL subscribers, after the transaction that recorded them. Best effort, as every subscription
 * event: the record is in Postgres, and GET …/scaling-decisions reads it.
 */
@Injectable()
export class ScalingDecisionEvents {
  constructor(private readonly events: EventPublisher) {}

  publish(decision: ScalingDecision): Promise<void> {
    return this.events.publish('scaling', decision.tenantId, decision.deploymentId, toDecisionMessage(decision));
  }
}

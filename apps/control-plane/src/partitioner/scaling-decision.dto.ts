import { ApiProperty } from '@nestjs/swagger';
import { PARTITIONER_MODES } from '../deployments/deployment';
import { DECISION_KINDS, DECISION_SOURCES, type ScalingDecision } from './scaling-decision';

export class PlannedMoveDto {
  @ApiProperty() keyGroup!: number;
  @ApiProperty({ description: 'Its owner in the routing the decision was planned on' }) fromSubtask!: number;
  @ApiProperty() toSubtask!: number;
  @ApiProperty({ description: 'Why this key group, in words' }) reason!: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'number' },
    description: 'keyGroupRate, stateBytes, fromLoad, fromLoadAfter, toLoad, toLoadAfter, fromFairLoad, toFairLoad (records/s, bytes)',
  })
  evidence!: Record<string, number>;
}

export class PlannedKeySplitDto {
  @ApiProperty({ description: 'The key as the heavy-key sketch names it' }) key!: string;
  @ApiProperty({ description: "The key's own key group" }) keyGroup!: number;
  @ApiProperty({ type: [Number], description: 'The subtasks its records go to' }) subtasks!: number[];
  @ApiProperty({ type: [Number], description: 'The share of its records each of them takes (summing to 1)' }) weights!: number[];
  @ApiProperty({ enum: ['new', 'widen', 'reweight'] }) change!: string;
  @ApiProperty({ description: 'Why, in words' }) reason!: string;
}

export class PlannedFoldBackDto {
  @ApiProperty() key!: string;
  @ApiProperty() keyGroup!: number;
  @ApiProperty({ description: "Its key group's owner: the key goes there whole again" }) toSubtask!: number;
  @ApiProperty({ type: [Number] }) fromSubtasks!: number[];
  @ApiProperty() reason!: string;
}

export class DeclinedActionDto {
  @ApiProperty({ enum: ['rebalance', 'move', 'split', 'fold-back'] }) action!: string;
  @ApiProperty({ enum: ['hysteresis', 'budget', 'cool-down', 'not-mergeable', 'no-improving-move'] }) reason!: string;
  @ApiProperty({ type: Number, nullable: true }) keyGroup!: number | null;
  @ApiProperty({ type: String, nullable: true }) key!: string | null;
  @ApiProperty() detail!: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'number' } }) evidence!: Record<string, number>;
}

export class KeyGroupRateDto {
  @ApiProperty() keyGroup!: number;
  @ApiProperty({ description: 'records/s' }) rate!: number;
}

export class OverloadedSubtaskDto {
  @ApiProperty() subtask!: number;
  @ApiProperty({ description: 'records/s routed to it' }) load!: number;
  @ApiProperty({ description: "its share of the operator's load in proportion to capacity (records/s)" }) fairLoad!: number;
  @ApiProperty({ description: 'load ÷ fairLoad' }) ratio!: number;
  @ApiProperty({ type: Number, nullable: true, description: 'records/s it can process when busy all the time (records ÷ busy time); null: not measured' })
  capacity!: number | null;
  @ApiProperty({ type: [KeyGroupRateDto], description: 'its heaviest key groups' }) topKeyGroups!: KeyGroupRateDto[];
}

export class HotKeyDto {
  @ApiProperty({ description: 'As the heavy-hitters sketch names it' }) key!: string;
  @ApiProperty() keyGroup!: number;
  @ApiProperty({ description: 'records/s' }) rate!: number;
  @ApiProperty({ description: "its share of the operator's records" }) share!: number;
  @ApiProperty({ description: "rate ÷ a subtask's mean fair load" }) ofFairLoad!: number;
  @ApiProperty({ description: "how much of the rate may be the sketch's overestimate (records/s)" }) error!: number;
  @ApiProperty({ description: 'the subtask owning its key group' }) subtask!: number;
}

export class DetectionDto {
  @ApiProperty({ type: [OverloadedSubtaskDto], description: "Subtasks above the policy's actAbove (1.1 by default) × their fair load" }) overloadedSubtasks!: OverloadedSubtaskDto[];
  @ApiProperty({ type: [HotKeyDto], description: "Keys carrying at least half a subtask's fair load" }) hotKeys!: HotKeyDto[];
}

export class ScalingDecisionDto {
  @ApiProperty({ example: 's0193a1b2c3d4a1b2c3d4e5f6' }) decisionId!: string;
  @ApiProperty() deploymentId!: string;
  @ApiProperty({ description: 'The run whose load and routing it was planned on' }) runNo!: number;
  @ApiProperty({ enum: DECISION_SOURCES, description: 'Who decided: the dynamic partitioner (key groups of one operator) or the autoscaler (the parallelism)' }) source!: string;
  @ApiProperty({ description: "The keyed operator it balances (partitioner), or the most demanding keyed operator the parallelism is sized for (autoscaler)" }) operatorId!: string;
  @ApiProperty({
    enum: PARTITIONER_MODES.filter((m) => m !== 'off'),
    description: "The controller's mode when decided. recommend: recorded only; auto: carried out (the partitioner's by `moveId`, the autoscaler's as a live rescale: the deployment's `rescale`)",
  })
  mode!: string;
  @ApiProperty({
    enum: DECISION_KINDS,
    description:
      'Partitioner: MOVE_KEY_GROUPS (it moves key groups, and may split keys too), SPLIT_KEYS (it splits or folds back hot keys of a splittable window) or DECLINED (it saw something to act on and declined: see `declined`). Autoscaler: SCALE_UP or SCALE_DOWN (to `toParallelism`) or HOLD (a need left alone: the reason says why, `inputs.hold` its code)',
  })
  kind!: string;
  @ApiProperty({ description: 'What it saw, did or recommends, and declined, in words' }) reason!: string;
  @ApiProperty({ type: [Number], description: 'The key groups it moves' }) keyGroups!: number[];
  @ApiProperty({ description: 'max over subtasks of load ÷ fair load, as measured' }) imbalanceBefore!: number;
  @ApiProperty({ description: 'The same, predicted once its moves are made' }) imbalanceAfter!: number;
  @ApiProperty({ description: 'Its budget stopped it above the aim: the next decision carries on' }) unfinished!: boolean;
  @ApiProperty({ type: DetectionDto }) detection!: DetectionDto;
  @ApiProperty({ type: [PlannedMoveDto], description: 'In the order to make them' }) moves!: PlannedMoveDto[];
  @ApiProperty({ type: [PlannedKeySplitDto], description: 'Hot keys of a splittable window it splits (partials merged downstream)' }) splits!: PlannedKeySplitDto[];
  @ApiProperty({ type: [PlannedFoldBackDto], description: 'Split keys that cooled and go back whole to their key group' }) foldBacks!: PlannedFoldBackDto[];
  @ApiProperty({ type: [DeclinedActionDto], description: 'What it would have done and did not, with why' }) declined!: DeclinedActionDto[];
  @ApiProperty({ type: [Number], description: 'records/s per subtask, measured' }) loadsBefore!: number[];
  @ApiProperty({ type: [Number], description: 'records/s per subtask, predicted' }) loadsAfter!: number[];
  @ApiProperty({ type: [Number], description: "each subtask's fair load (records/s)" }) fairLoads!: number[];
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'Partitioner: the load model: keyGroupRates, capacities, heavyKeys, owners (the routing), stateBytes per key group (estimated from the latest checkpoint: each subtask’s state spread evenly over its key groups; 0 where unknown) and stateBytesSource, fromMs/toMs of the snapshots, subtasks, policy (the deployment’s partitioner policy at the look: GET …/scaling-policy) and moveCost (budget, moveBudget, maxMovePauseMs, latestMove {moveId, keyGroups, worstPauseMs}, reason: the key groups the latest move’s measured pause leaves this look). Autoscaler: operators (per keyed operator: recordsInPerSec, busyMsPerSec mean/max, trueRatePerSubtask, targetRatePerSec, utilization, parallelism needed), source (readRatePerSec, backlog, backlogGrowthPerSec, ingestRatePerSec, targetRatePerSec), slo (latency against its threshold, state, pressure), policy, stabilization, fleet (slotsNeeded, slotsFree), hold, fromMs/toMs',
  })
  inputs!: Record<string, unknown>;
  @ApiProperty({ type: String, nullable: true, description: 'The key-group move carrying it out (mode auto): GET …/key-group-moves/{moveId}' }) moveId!: string | null;
  @ApiProperty({ type: Number, nullable: true, description: "The autoscaler's: the run's process count when decided; null for the partitioner's" }) fromParallelism!: number | null;
  @ApiProperty({ type: Number, nullable: true, description: "The autoscaler's: the parallelism it recommends (equal to fromParallelism for a HOLD); null for the partitioner's" })
  toParallelism!: number | null;
  @ApiProperty({ format: 'date-time' }) decidedAt!: string;

  static from(d: ScalingDecision): ScalingDecisionDto {
    return {
      decisionId: d.decisionId,
      deploymentId: d.deploymentId,
      runNo: d.runNo,
      source: d.source,
      operatorId: d.operatorId,
      mode: d.mode,
      kind: d.kind,
      reason: d.reason,
      keyGroups: [...d.keyGroups],
      imbalanceBefore: d.imbalanceBefore,
      imbalanceAfter: d.imbalanceAfter,
      unfinished: d.unfinished,
      detection: {
        overloadedSubtasks: d.detection.overloadedSubtasks.map((s) => ({ ...s, topKeyGroups: s.topKeyGroups.map((g) => ({ ...g })) })),
        hotKeys: d.detection.hotKeys.map((k) => ({ ...k })),
      },
      moves: d.decision.moves.map((m) => ({ keyGroup: m.keyGroup, fromSubtask: m.fromSubtask, toSubtask: m.toSubtask, reason: m.reason, evidence: { ...m.evidence } })),
      splits: (d.decision.splits ?? []).map((s) => ({ key: s.key, keyGroup: s.keyGroup, subtasks: [...s.subtasks], weights: [...s.weights], change: s.change, reason: s.reason })),
      foldBacks: (d.decision.foldBacks ?? []).map((f) => ({ key: f.key, keyGroup: f.keyGroup, toSubtask: f.toSubtask, fromSubtasks: [...f.fromSubtasks], reason: f.reason })),
      declined: d.decision.declined.map((x) => ({ action: x.action, reason: x.reason, keyGroup: x.keyGroup ?? null, key: x.key ?? null, detail: x.detail, evidence: { ...x.evidence } })),
      loadsBefore: [...d.decision.loadsBefore],
      loadsAfter: [...d.decision.loadsAfter],
      fairLoads: [...d.decision.fairLoads],
      inputs: { ...d.inputs },
      moveId: d.moveId,
      fromParallelism: d.fromParallelism,
      toParallelism: d.toParallelism,
      decidedAt: d.decidedAt.toISOString(),
    };
  }
}

export class ScalingDecisionPageDto {
  @ApiProperty({ type: [ScalingDecisionDto], description: 'Newest first' }) items!: ScalingDecisionDto[];
  @ApiProperty({ type: String, nullable: true }) nextCursor!: string | null;
}

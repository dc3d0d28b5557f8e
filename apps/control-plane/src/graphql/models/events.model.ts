import { Field, Float, ID, Int, ObjectType } from '@nestjs/graphql';
import type { ScalingDecisionMessage } from '../../partitioner/scaling-decision-events';
import type { DeploymentStatusEvent } from '../../events/events';

@ObjectType('DeploymentStatusChange', { description: "A change of a deployment's observed status, with its reason." })
export class DeploymentStatusChangeModel {
  @Field(() => ID) deploymentId!: string;
  @Field({ description: 'The observed status after the change (CREATED, STARTING, RUNNING, …)' }) status!: string;
  @Field(() => String, { nullable: true }) previousStatus!: string | null;
  @Field({ description: 'RUNNING, SUSPENDED or CANCELLED' }) desiredState!: string;
  @Field() reason!: string;
  @Field() at!: Date;

  static from(e: DeploymentStatusEvent): DeploymentStatusChangeModel {
    return { ...e, at: new Date(e.at) };
  }
}

/** What the rules rollout (issue 6) publishes on `weir:<prefix>:rollouts:<tenantId>:<deploymentId>`. */
export interface RuleRolloutMessage {
  readonly deploymentId: string;
  readonly ruleSetId: string;
  readonly version: number;
  readonly phase: string;
  readonly acknowledgedSubtasks: number;
  readonly totalSubtasks: number;
  readonly message: string | null;
  readonly at: number;
  /** Per subtask: the version it applies and where in its data input it switched (rules service's SubtaskProgress). */
  readonly subtasks?: readonly {
    readonly operatorId: string;
    readonly subtask: number;
    readonly appliedVersion: number | null;
    readonly inputPosition: Readonly<Record<string, string>> | null;
  }[];
}

@ObjectType('RuleInputPosition', { description: 'An offset in one source partition of a job\'s data input.' })
export class RuleInputPositionModel {
  @Field({ description: 'topic:partition' }) source!: string;
  @Field({ description: 'The offset after the last record routed by the previous rules' }) offset!: string;
}

@ObjectType('RuleSubtaskProgress', { description: 'One routing subtask of a rule rollout.' })
export class RuleSubtaskProgressModel {
  @Field() operatorId!: string;
  @Field(() => Int) subtask!: number;
  @Field(() => Int, { nullable: true, description: "The rollout's version once this subtask applied all of it" }) appliedVersion!: number | null;
  @Field(() => [RuleInputPositionModel], {
    nullable: true,
    description: 'Where in its data input the subtask switched to the version, per source partition; null until applied',
  })
  inputPosition!: RuleInputPositionModel[] | null;
}

@ObjectType('RuleRolloutProgress', {
  description:
    'Progress of a rule-set version rolling out to a deployment, per-subtask acknowledgements counted. Published by ' +
    'the rules service (apps/control-plane/src/rules).',
})
export class RuleRolloutProgressModel {
  @Field(() => ID) deploymentId!: string;
  @Field() ruleSetId!: string;
  @Field(() => Int) version!: number;
  @Field({ description: 'VALIDATING, SHADOW, ROLLING_OUT, ACTIVE, ROLLED_BACK or FAILED' }) phase!: string;
  @Field(() => Int) acknowledgedSubtasks!: number;
  @Field(() => Int) totalSubtasks!: number;
  @Field(() => String, { nullable: true }) message!: string | null;
  @Field() at!: Date;
  @Field(() => [RuleSubtaskProgressModel]) subtasks!: RuleSubtaskProgressModel[];

  static from(m: RuleRolloutMessage): RuleRolloutProgressModel {
    const subtasks = (m.subtasks ?? []).map((s) => ({
      ...s, inputPosition: s.inputPosition ? Object.entries(s.inputPosition).map(([source, offset]) => ({ source, offset })) : null,
    }));
    return { ...m, at: new Date(m.at), subtasks };
  }
}

@ObjectType('PlannedKeyGroupMove', { description: 'One key group a decision moves: its owner when planned, where it goes, and why.' })
export class PlannedKeyGroupMoveModel {
  @Field(() => Int) keyGroup!: number;
  @Field(() => Int) fromSubtask!: number;
  @Field(() => Int) toSubtask!: number;
  @Field() reason!: string;
}

@ObjectType('PlannedKeySplit', { description: 'A hot key of a splittable window a decision splits over several subtasks (its partials merged downstream).' })
export class PlannedKeySplitModel {
  @Field() key!: string;
  @Field(() => Int, { description: "the key's own key group" }) keyGroup!: number;
  @Field(() => [Int]) subtasks!: number[];
  @Field(() => [Float], { description: 'the share of its records each subtask takes' }) weights!: number[];
  @Field({ description: 'new, widen or reweight' }) change!: string;
  @Field() reason!: string;
}

@ObjectType('PlannedFoldBack', { description: 'A split key that cooled: it goes back whole to its key group.' })
export class PlannedFoldBackModel {
  @Field() key!: string;
  @Field(() => Int) keyGroup!: number;
  @Field(() => Int) toSubtask!: number;
  @Field(() => [Int]) fromSubtasks!: number[];
  @Field() reason!: string;
}

@ObjectType('DeclinedScalingAction', { description: 'Something a decision would have done and did not, with why.' })
export class DeclinedScalingActionModel {
  @Field({ description: 'rebalance, move, split or fold-back' }) action!: string;
  @Field({ description: 'hysteresis, budget, cool-down, not-mergeable or no-improving-move' }) reason!: string;
  @Field(() => Int, { nullable: true }) keyGroup!: number | null;
  @Field(() => String, { nullable: true }) key!: string | null;
  @Field() detail!: string;
}

@ObjectType('OverloadedSubtask', { description: 'A subtask above actAbove (1.1) × its fair load, with its heaviest key groups.' })
export class OverloadedSubtaskModel {
  @Field(() => Int) subtask!: number;
  @Field({ description: 'records/s routed to it' }) load!: number;
  @Field({ description: "its share of the operator's load in proportion to capacity (records/s)" }) fairLoad!: number;
  @Field({ description: 'load ÷ fairLoad' }) ratio!: number;
  @Field(() => Float, { nullable: true, description: 'records/s it can process when busy all the time; null: not measured' }) capacity!: number | null;
  @Field(() => [Int], { description: 'its heaviest key groups, heaviest first' }) topKeyGroups!: number[];
}

@ObjectType('HotKey', { description: "A key carrying at least half a subtask's fair load." })
export class HotKeyModel {
  @Field() key!: string;
  @Field(() => Int) keyGroup!: number;
  @Field({ description: 'records/s' }) rate!: number;
  @Field({ description: "its share of the operator's records" }) share!: number;
  @Field(() => Int, { description: 'the subtask owning its key group' }) subtask!: number;
}

@ObjectType('ScalingDecision', {
  description:
    'A decision of the dynamic partitioner or of the autoscaler, with its inputs and reason: pushed by ' +
    'scalingDecisions as it is recorded, listed by Deployment.scalingDecisions (REST: /v1/deployments/{id}/scaling-decisions).',
})
export class ScalingDecisionModel {
  @Field(() => ID) deploymentId!: string;
  @Field() decisionId!: string;
  @Field({ description: 'partitioner or autoscaler' }) source!: string;
  @Field({
    description:
      'Partitioner: MOVE_KEY_GROUPS (it moves key groups, and may split keys too), SPLIT_KEYS (it splits or folds back hot keys of a splittable window) or DECLINED (it saw something to act on and declined: see declined). Autoscaler: SCALE_UP, SCALE_DOWN (to toParallelism) or HOLD (a need left alone, the reason says why)',
  })
  kind!: string;
  @Field() reason!: string;
  @Field(() => String, { nullable: true, description: 'The keyed operator it balances (partitioner) or sizes the parallelism for (autoscaler)' }) operatorId!: string | null;
  @Field(() => Int, { description: 'The run it was planned on' }) runNo!: number;
  @Field({ description: "recommend (recorded only) or auto (carried out: the partitioner's by moveId, the autoscaler's as a live rescale)" }) mode!: string;
  @Field(() => String, { nullable: true, description: 'The key-group move carrying it out (mode auto)' }) moveId!: string | null;
  @Field({ description: 'max over subtasks of load ÷ fair load, as measured' }) imbalanceBefore!: number;
  @Field({ description: 'The same, predicted once its moves are made' }) imbalanceAfter!: number;
  @Field({ description: 'Its budget stopped it above the aim: the next decision carries on' }) unfinished!: boolean;
  @Field(() => [PlannedKeyGroupMoveModel]) moves!: PlannedKeyGroupMoveModel[];
  @Field(() => [PlannedKeySplitModel]) splits!: PlannedKeySplitModel[];
  @Field(() => [PlannedFoldBackModel]) foldBacks!: PlannedFoldBackModel[];
  @Field(() => [DeclinedScalingActionModel]) declined!: DeclinedScalingActionModel[];
  @Field(() => [OverloadedSubtaskModel]) overloadedSubtasks!: OverloadedSubtaskModel[];
  @Field(() => [HotKeyModel]) hotKeys!: HotKeyModel[];
  @Field({ description: "The figures the decision was taken on, as a JSON object (the partitioner's load model; the autoscaler's rates, busy time, backlog, SLO state, fleet)" }) inputs!: string;
  @Field(() => Int, { nullable: true, description: "The autoscaler's: the run's process count when decided; null for the partitioner's" }) fromParallelism!: number | null;
  @Field(() => Int, { nullable: true, description: "The autoscaler's: the parallelism recommended (equal to fromParallelism for a HOLD); null for the partitioner's" }) toParallelism!: number | null;
  @Field(() => [Int], { description: 'Key groups moved' }) keyGroups!: number[];
  @Field() at!: Date;

  static from(m: ScalingDecisionMessage): ScalingDecisionModel {
    return {
      deploymentId: m.deploymentId,
      decisionId: m.decisionId,
      source: m.source,
      kind: m.kind,
      reason: m.reason,
      operatorId: m.operatorId,
      runNo: m.runNo,
      mode: m.mode,
      moveId: m.moveId,
      imbalanceBefore: m.imbalanceBefore,
      imbalanceAfter: m.imbalanceAfter,
      unfinished: m.unfinished,
      moves: m.moves.map((x) => ({ ...x })),
      splits: (m.splits ?? []).map((x) => ({ ...x, subtasks: [...x.subtasks], weights: [...x.weights] })),
      foldBacks: (m.foldBacks ?? []).map((x) => ({ ...x, fromSubtasks: [...x.fromSubtasks] })),
      declined: m.declined.map((x) => ({ ...x })),
      overloadedSubtasks: m.detection.overloadedSubtasks.map((s) => ({ ...s, topKeyGroups: s.topKeyGroups.map((g) => g.keyGroup) })),
      hotKeys: m.detection.hotKeys.map((k) => ({ key: k.key, keyGroup: k.keyGroup, rate: k.rate, share: k.share, subtask: k.subtask })),
      inputs: JSON.stringify(m.inputs ?? {}),
      fromParallelism: m.fromParallelism,
      toParallelism: m.toParallelism,
      keyGroups: [...(m.keyGroups ?? [])],
      at: new Date(m.at),
    };
  }
}

@ObjectType()
export class ScalingDecisionPage {
  @Field(() => [ScalingDecisionModel], { description: 'Newest first' }) items!: ScalingDecisionModel[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

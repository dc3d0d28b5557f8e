import { Field, ID, Int, ObjectType } from '@nestjs/graphql';
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

/** What the partitioner and autoscaler publish on `weir:<prefix>:scaling:<tenantId>:<deploymentId>`. */
export interface ScalingDecisionMessage {
  readonly deploymentId: string;
  readonly decisionId: string;
  readonly kind: string;
  readonly reason: string;
  readonly inputs: Record<string, unknown>;
  readonly fromParallelism: number | null;
  readonly toParallelism: number | null;
  readonly keyGroups: readonly number[];
  readonly at: number;
}

@ObjectType('ScalingDecision', {
  description:
    'A decision of the dynamic partitioner or the autoscaler, with its inputs and reason. Published by them (not yet ' +
    'built); until then no message is published and the subscription stays silent.',
})
export class ScalingDecisionModel {
  @Field(() => ID) deploymentId!: string;
  @Field() decisionId!: string;
  @Field({ description: 'MOVE_KEY_GROUPS, SPLIT_HOT_KEY, MERGE_HOT_KEY or RESCALE' }) kind!: string;
  @Field() reason!: string;
  @Field({ description: 'The figures the decision was taken on, as a JSON object' }) inputs!: string;
  @Field(() => Int, { nullable: true }) fromParallelism!: number | null;
  @Field(() => Int, { nullable: true }) toParallelism!: number | null;
  @Field(() => [Int], { description: 'Key groups moved or split' }) keyGroups!: number[];
  @Field() at!: Date;

  static from(m: ScalingDecisionMessage): ScalingDecisionModel {
    return { ...m, inputs: JSON.stringify(m.inputs ?? {}), keyGroups: [...(m.keyGroups ?? [])], at: new Date(m.at) };
  }
}

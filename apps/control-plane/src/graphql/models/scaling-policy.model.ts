import { Field, Float, ID, InputType, Int, ObjectType } from '@nestjs/graphql';
import type { ScalingPolicy, ScalingPolicyChange, ScalingPolicyView } from '../../scaling/scaling-policy';
import { AutoscalerModeEnum, PartitionerModeEnum } from './deployment.model';

@ObjectType('PartitionerPolicy', { description: 'What the dynamic partitioner may do and how eagerly (as GET /v1/deployments/{id}/scaling-policy).' })
export class PartitionerPolicyModel {
  @Field(() => PartitionerModeEnum) mode!: PartitionerModeEnum;
  @Field(() => Int, { description: 'How often it plans the deployment, ms (1000-3600000)' }) intervalMs!: number;
  @Field(() => Int, { description: "Key groups one look may move (1 to the bundle's maxParallelism); the move-cost feedback may lower it" }) moveBudget!: number;
  @Field(() => Float, { description: 'Act only above this imbalance (max ÷ fair subtask load; 1.01-4)' }) actAbove!: number;
  @Field(() => Float, { description: 'Once acting, plan down to this (1 to actAbove)' }) aimBelow!: number;
  @Field(() => Int, { description: 'A key group that moved within this long stays where it is, ms' }) coolDownMs!: number;
  @Field(() => Int, { description: "The pause a move may cost, ms: the next look's budget is what would have fitted the latest move's worst pause" }) maxMovePauseMs!: number;
}

@ObjectType('AutoscalerPolicy', { description: 'What the autoscaler may do and how eagerly.' })
export class AutoscalerPolicyModel {
  @Field(() => AutoscalerModeEnum) mode!: AutoscalerModeEnum;
  @Field(() => Int) intervalMs!: number;
  @Field(() => Int, { description: "At least 1, at most maxParallelism" }) minParallelism!: number;
  @Field(() => Int, { description: "At most the bundle's maxParallelism" }) maxParallelism!: number;
  @Field(() => Float, { description: 'The busy share each subtask is sized for (0.1-0.95)' }) targetUtilization!: number;
  @Field(() => Int) scaleUpWindowMs!: number;
  @Field(() => Int) scaleDownWindowMs!: number;
  @Field(() => Int) cooldownMs!: number;
  @Field(() => Int) catchUpMs!: number;
  @Field(() => Float) sloFraction!: number;
}

@ObjectType('ScalingPolicyValues')
export class ScalingPolicyValuesModel {
  @Field(() => PartitionerPolicyModel) partitioner!: PartitionerPolicyModel;
  @Field(() => AutoscalerPolicyModel) autoscaler!: AutoscalerPolicyModel;

  static from(p: ScalingPolicy): ScalingPolicyValuesModel {
    return {
      partitioner: { ...p.partitioner, mode: p.partitioner.mode as PartitionerModeEnum },
      autoscaler: { ...p.autoscaler, mode: p.autoscaler.mode as AutoscalerModeEnum },
    };
  }
}

@ObjectType('ScalingPolicy', { description: "A deployment's scaling policy; both controllers read it at each look." })
export class ScalingPolicyModel extends ScalingPolicyValuesModel {
  @Field(() => ID) deploymentId!: string;
  @Field({ description: "properties: never changed over the API (the deployment's properties over the defaults); api: stored by a change" }) source!: string;
  @Field(() => String, { nullable: true, description: 'ISO 8601; the last change over the API' }) updatedAt!: string | null;
  @Field(() => String, { nullable: true, description: 'The API key id of the last change' }) updatedBy!: string | null;

  static fromView(v: ScalingPolicyView): ScalingPolicyModel {
    return { ...ScalingPolicyValuesModel.from(v.policy), deploymentId: v.deploymentId, source: v.source, updatedAt: v.updatedAt?.toISOString() ?? null, updatedBy: v.updatedBy };
  }
}

@ObjectType('ScalingPolicyChange', { description: 'One change of the policy: who, when, the fields changed, the policy before and after.' })
export class ScalingPolicyChangeModel {
  @Field(() => ID) changeId!: string;
  @Field(() => String, { description: 'ISO 8601' }) changedAt!: string;
  @Field({ description: 'The API key id that made it' }) changedBy!: string;
  @Field(() => [String]) fields!: string[];
  @Field(() => ScalingPolicyValuesModel) from!: ScalingPolicyValuesModel;
  @Field(() => ScalingPolicyValuesModel) to!: ScalingPolicyValuesModel;

  static from(c: ScalingPolicyChange): ScalingPolicyChangeModel {
    return { changeId: c.changeId, changedAt: c.changedAt.toISOString(), changedBy: c.changedBy, fields: [...c.fields], from: ScalingPolicyValuesModel.from(c.from), to: ScalingPolicyValuesModel.from(c.to) };
  }
}

@ObjectType('ScalingPolicyChangePage')
export class ScalingPolicyChangePage {
  @Field(() => [ScalingPolicyChangeModel]) items!: ScalingPolicyChangeModel[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@InputType('PartitionerPolicyInput', { description: 'The partitioner fields to change; omitted ones stay.' })
export class PartitionerPolicyInput {
  @Field(() => PartitionerModeEnum, { nullable: true }) mode?: PartitionerModeEnum;
  @Field(() => Int, { nullable: true }) intervalMs?: number;
  @Field(() => Int, { nullable: true }) moveBudget?: number;
  @Field(() => Float, { nullable: true }) actAbove?: number;
  @Field(() => Float, { nullable: true }) aimBelow?: number;
  @Field(() => Int, { nullable: true }) coolDownMs?: number;
  @Field(() => Int, { nullable: true }) maxMovePauseMs?: number;
}

@InputType('AutoscalerPolicyInput', { description: 'The autoscaler fields to change; omitted ones stay.' })
export class AutoscalerPolicyInput {
  @Field(() => AutoscalerModeEnum, { nullable: true }) mode?: AutoscalerModeEnum;
  @Field(() => Int, { nullable: true }) intervalMs?: number;
  @Field(() => Int, { nullable: true }) minParallelism?: number;
  @Field(() => Int, { nullable: true }) maxParallelism?: number;
  @Field(() => Float, { nullable: true }) targetUtilization?: number;
  @Field(() => Int, { nullable: true }) scaleUpWindowMs?: number;
  @Field(() => Int, { nullable: true }) scaleDownWindowMs?: number;
  @Field(() => Int, { nullable: true }) cooldownMs?: number;
  @Field(() => Int, { nullable: true }) catchUpMs?: number;
  @Field(() => Float, { nullable: true }) sloFraction?: number;
}

@InputType('ScalingPolicyInput', { description: 'As PATCH /v1/deployments/{id}/scaling-policy: the fields named change, the others stay.' })
export class ScalingPolicyInput {
  @Field(() => PartitionerPolicyInput, { nullable: true }) partitioner?: PartitionerPolicyInput;
  @Field(() => AutoscalerPolicyInput, { nullable: true }) autoscaler?: AutoscalerPolicyInput;
}

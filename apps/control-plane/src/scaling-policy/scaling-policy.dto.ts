import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { z } from 'zod';
import { AUTOSCALER_MODES, PARTITIONER_MODES } from '../deployments/deployment';
import { AUTOSCALER_RANGES, PARTITIONER_RANGES, type Range, type ScalingPolicy, type ScalingPolicyChange, type ScalingPolicyView } from '../scaling/scaling-policy';

/** A field of the policy as the API takes it: its type and static range, with the message a 400 names it with. */
function field(range: Range) {
  const message = `must be ${range.integer ? 'an integer' : 'a number'} in [${range.min}, ${range.max}]`;
  const n = z.number({ error: message }).min(range.min, message).max(range.max, message);
  return (range.integer ? n.int(message) : n).optional();
}

const partitionerPatch = z.strictObject(
  {
    mode: z.enum(PARTITIONER_MODES, { error: `must be one of ${PARTITIONER_MODES.join(', ')}` }).optional(),
    intervalMs: field(PARTITIONER_RANGES.intervalMs),
    moveBudget: field(PARTITIONER_RANGES.moveBudget),
    actAbove: field(PARTITIONER_RANGES.actAbove),
    aimBelow: field(PARTITIONER_RANGES.aimBelow),
    coolDownMs: field(PARTITIONER_RANGES.coolDownMs),
    maxMovePauseMs: field(PARTITIONER_RANGES.maxMovePauseMs),
  },
  { error: 'must be an object of partitioner policy fields' },
);

const autoscalerPatch = z.strictObject(
  {
    mode: z.enum(AUTOSCALER_MODES, { error: `must be one of ${AUTOSCALER_MODES.join(', ')}` }).optional(),
    intervalMs: field(AUTOSCALER_RANGES.intervalMs),
    minParallelism: field(AUTOSCALER_RANGES.minParallelism),
    maxParallelism: field(AUTOSCALER_RANGES.maxParallelism),
    targetUtilization: field(AUTOSCALER_RANGES.targetUtilization),
    scaleUpWindowMs: field(AUTOSCALER_RANGES.scaleUpWindowMs),
    scaleDownWindowMs: field(AUTOSCALER_RANGES.scaleDownWindowMs),
    cooldownMs: field(AUTOSCALER_RANGES.cooldownMs),
    catchUpMs: field(AUTOSCALER_RANGES.catchUpMs),
    sloFraction: field(AUTOSCALER_RANGES.sloFraction),
  },
  { error: 'must be an object of autoscaler policy fields' },
);

/** PATCH's body: any fields of either part; what is not named stays as it is (a JSON merge; null is not a value). */
export const scalingPolicyPatchBody = z
  .strictObject({ partitioner: partitionerPatch.optional(), autoscaler: autoscalerPatch.optional() }, { error: 'must be a JSON object: { partitioner?, autoscaler? }' })
  .refine((b) => Object.keys(b.partitioner ?? {}).length + Object.keys(b.autoscaler ?? {}).length > 0, {
    message: 'give at least one field of partitioner or autoscaler',
    path: ['partitioner'],
  });
export type ScalingPolicyPatchBody = z.infer<typeof scalingPolicyPatchBody>;

const range = (r: Range, what: string) => `${what} ${r.integer ? 'An integer' : 'A number'} in [${r.min}, ${r.max}].`;

export class PartitionerPolicyDto {
  @ApiProperty({ enum: PARTITIONER_MODES, description: 'off: never looked at; recommend (default): decisions recorded only; auto: their key-group moves made' }) mode!: string;
  @ApiProperty({ description: range(PARTITIONER_RANGES.intervalMs, 'How often it plans the deployment, ms.') }) intervalMs!: number;
  @ApiProperty({ description: range(PARTITIONER_RANGES.moveBudget, "Key groups one look may move (at most the bundle's maxParallelism); the move-cost feedback may lower it.") }) moveBudget!: number;
  @ApiProperty({ description: range(PARTITIONER_RANGES.actAbove, 'Act only when max ÷ fair subtask load is above this.') }) actAbove!: number;
  @ApiProperty({ description: range(PARTITIONER_RANGES.aimBelow, 'Once acting, plan down to this; at most actAbove.') }) aimBelow!: number;
  @ApiProperty({ description: range(PARTITIONER_RANGES.coolDownMs, 'A key group that moved within this long stays where it is, ms.') }) coolDownMs!: number;
  @ApiProperty({
    description: range(PARTITIONER_RANGES.maxMovePauseMs, "The pause a move may cost, ms: the next look's budget is the key groups whose pause would have fitted, judged on the latest move's worst pause."),
  })
  maxMovePauseMs!: number;
}

export class AutoscalerPolicyDto {
  @ApiProperty({ enum: AUTOSCALER_MODES, description: 'off: never looked at; recommend (default): decisions recorded only; auto: rescaled live' }) mode!: string;
  @ApiProperty({ description: range(AUTOSCALER_RANGES.intervalMs, 'How often it looks, ms.') }) intervalMs!: number;
  @ApiProperty({ description: range(AUTOSCALER_RANGES.minParallelism, "The fewest subtasks it scales down to; at most maxParallelism and the bundle's maxParallelism.") }) minParallelism!: number;
  @ApiProperty({ description: range(AUTOSCALER_RANGES.maxParallelism, "The most subtasks it scales up to; at most the bundle's maxParallelism.") }) maxParallelism!: number;
  @ApiProperty({ description: range(AUTOSCALER_RANGES.targetUtilization, 'The busy share each subtask is sized for.') }) targetUtilization!: number;
  @ApiProperty({ description: range(AUTOSCALER_RANGES.scaleUpWindowMs, 'A need up must hold this long, ms.') }) scaleUpWindowMs!: number;
  @ApiProperty({ description: range(AUTOSCALER_RANGES.scaleDownWindowMs, 'A need down must hold this long, ms.') }) scaleDownWindowMs!: number;
  @ApiProperty({ description: range(AUTOSCALER_RANGES.cooldownMs, 'After a rescale or restart, nothing is decided for this long, ms.') }) cooldownMs!: number;
  @ApiProperty({ description: range(AUTOSCALER_RANGES.catchUpMs, 'The sources’ backlog is to be drained within this long, ms.') }) catchUpMs!: number;
  @ApiProperty({ description: range(AUTOSCALER_RANGES.sloFraction, "Latency above this fraction of an SLO's threshold while busy scales up.") }) sloFraction!: number;
}

export class ScalingPolicyDto {
  @ApiProperty() deploymentId!: string;
  @ApiProperty({ type: PartitionerPolicyDto }) partitioner!: PartitionerPolicyDto;
  @ApiProperty({ type: AutoscalerPolicyDto }) autoscaler!: AutoscalerPolicyDto;
  @ApiProperty({ enum: ['properties', 'api'], description: "properties: never changed over the API (the deployment's properties over the defaults); api: stored by a change" }) source!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'The last change over the API' }) updatedAt!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The API key id that made the last change' }) updatedBy!: string | null;

  static from(v: ScalingPolicyView): ScalingPolicyDto {
    return { deploymentId: v.deploymentId, ...policyDto(v.policy), source: v.source, updatedAt: v.updatedAt?.toISOString() ?? null, updatedBy: v.updatedBy };
  }
}

export class PartitionerPolicyPatchDto {
  @ApiPropertyOptional({ enum: PARTITIONER_MODES }) mode?: string;
  @ApiPropertyOptional() intervalMs?: number;
  @ApiPropertyOptional() moveBudget?: number;
  @ApiPropertyOptional() actAbove?: number;
  @ApiPropertyOptional() aimBelow?: number;
  @ApiPropertyOptional() coolDownMs?: number;
  @ApiPropertyOptional() maxMovePauseMs?: number;
}

export class AutoscalerPolicyPatchDto {
  @ApiPropertyOptional({ enum: AUTOSCALER_MODES }) mode?: string;
  @ApiPropertyOptional() intervalMs?: number;
  @ApiPropertyOptional() minParallelism?: number;
  @ApiPropertyOptional() maxParallelism?: number;
  @ApiPropertyOptional() targetUtilization?: number;
  @ApiPropertyOptional() scaleUpWindowMs?: number;
  @ApiPropertyOptional() scaleDownWindowMs?: number;
  @ApiPropertyOptional() cooldownMs?: number;
  @ApiPropertyOptional() catchUpMs?: number;
  @ApiPropertyOptional() sloFraction?: number;
}

export class ScalingPolicyPatchDto {
  @ApiPropertyOptional({ type: PartitionerPolicyPatchDto, description: 'The partitioner fields to change; the others stay' }) partitioner?: PartitionerPolicyPatchDto;
  @ApiPropertyOptional({ type: AutoscalerPolicyPatchDto, description: 'The autoscaler fields to change; the others stay' }) autoscaler?: AutoscalerPolicyPatchDto;
}

export class ScalingPolicyValuesDto {
  @ApiProperty({ type: PartitionerPolicyDto }) partitioner!: PartitionerPolicyDto;
  @ApiProperty({ type: AutoscalerPolicyDto }) autoscaler!: AutoscalerPolicyDto;
}

export class ScalingPolicyChangeDto {
  @ApiProperty({ example: 'p0193a1b2c3d4a1b2c3d4e5f6' }) changeId!: string;
  @ApiProperty() deploymentId!: string;
  @ApiProperty({ format: 'date-time' }) changedAt!: string;
  @ApiProperty({ description: 'The API key id that made it' }) changedBy!: string;
  @ApiProperty({ type: [String], description: 'The fields whose values changed, e.g. autoscaler.mode' }) fields!: string[];
  @ApiProperty({ type: ScalingPolicyValuesDto, description: 'The whole policy before' }) from!: ScalingPolicyValuesDto;
  @ApiProperty({ type: ScalingPolicyValuesDto, description: 'The whole policy after' }) to!: ScalingPolicyValuesDto;

  static from(c: ScalingPolicyChange): ScalingPolicyChangeDto {
    return { changeId: c.changeId, deploymentId: c.deploymentId, changedAt: c.changedAt.toISOString(), changedBy: c.changedBy, fields: [...c.fields], from: policyDto(c.from), to: policyDto(c.to) };
  }
}

export class ScalingPolicyChangePageDto {
  @ApiProperty({ type: [ScalingPolicyChangeDto], description: 'Newest first' }) items!: ScalingPolicyChangeDto[];
  @ApiProperty({ type: String, nullable: true }) nextCursor!: string | null;
}

function policyDto(p: ScalingPolicy): ScalingPolicyValuesDto {
  return { partitioner: { ...p.partitioner }, autoscaler: { ...p.autoscaler } };
}

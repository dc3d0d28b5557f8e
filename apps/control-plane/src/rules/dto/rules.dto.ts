import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { RolloutStatus, RuleSetVersion, SubtaskProgress } from '../rule-set';

/** The body of POST …/rules: validated against the deployment's rules schema (rule-set-validator.ts, deployment-rules-schemas.ts). */
export class CreateRuleSetDto {
  @ApiProperty({
    type: 'array',
    minItems: 1,
    maxItems: 1000,
    items: { type: 'object', additionalProperties: true },
    description:
      "The rules, each as the deployment's rules schema describes it (the one its job declares, built with the deployment's config; else the bundle manifest's rulesSchema), with unique ids (pause one with its state, not by leaving it out)",
  })
  rules!: Record<string, unknown>[];
}

/** The body of POST …/rules/rollback. */
export class RollbackRulesDto {
  @ApiProperty({ type: 'integer', minimum: 1, description: 'The earlier version whose rules are rolled out again' }) toVersion!: number;
}

export class RuleSetVersionDto {
  @ApiProperty() deploymentId!: string;
  @ApiProperty({ description: 'Numbered 1, 2, 3 … per deployment; immutable' }) version!: number;
  @ApiProperty({ type: 'array', items: { type: 'object' }, description: "The rules, each as the deployment's rules schema describes it" })
  rules!: Record<string, unknown>[];
  @ApiProperty() createdAt!: string;

  static from(v: RuleSetVersion): RuleSetVersionDto {
    return { deploymentId: v.deploymentId, version: v.version, rules: [...v.rules], createdAt: v.createdAt.toISOString() };
  }
}

export class RuleSetVersionPageDto {
  @ApiProperty({ type: [RuleSetVersionDto] }) items!: RuleSetVersionDto[];
  @ApiProperty({ type: String, nullable: true }) nextCursor!: string | null;
}

export class SubtaskProgressDto {
  @ApiProperty() operatorId!: string;
  @ApiProperty() subtask!: number;
  @ApiProperty() parallelism!: number;
  @ApiProperty({ type: Number, nullable: true, description: "The rollout's version once this subtask acknowledged all of it" }) appliedVersion!: number | null;
  @ApiProperty() acknowledgedRules!: number;
  @ApiProperty({ type: 'array', items: { type: 'object' } }) rejected!: { ruleId: string; problems: string[] }[];
  @ApiProperty({ type: String, nullable: true, description: 'Offset in the rules topic (its one partition) from which this subtask applies the version' })
  rulesOffset!: string | null;
  @ApiProperty({
    type: 'object', additionalProperties: { type: 'string' }, nullable: true, example: { 't.acme.transactions:0': '1200' },
    description:
      'Where in its data input this subtask switched to the version: per source partition (topic:partition), the offset ' +
      'after the last record it routed by the previous rules; its records of that partition from this offset on are routed ' +
      'by this version. A partition is missing when none of its records had reached the subtask yet. Null until applied.',
  })
  inputPosition!: Record<string, string> | null;
  @ApiProperty({ type: String, nullable: true }) lastAckAt!: string | null;
}

export class RolloutDto {
  @ApiProperty() id!: string;
  @ApiProperty() deploymentId!: string;
  @ApiProperty() version!: number;
  @ApiProperty({ enum: ['ROLLOUT', 'ROLLBACK', 'SHADOW'] }) kind!: string;
  @ApiProperty({ enum: ['ROLLING_OUT', 'ACTIVE', 'FAILED', 'SUPERSEDED'] }) phase!: string;
  @ApiProperty() rulesTopic!: string;
  @ApiProperty({ type: String, nullable: true }) rulesOffset!: string | null;
  @ApiProperty() acknowledgedSubtasks!: number;
  @ApiProperty({ type: Number, nullable: true, description: 'null until the first subtask acknowledged' }) totalSubtasks!: number | null;
  @ApiProperty({ type: [SubtaskProgressDto] }) subtasks!: SubtaskProgressDto[];
  @ApiPropertyOptional({ type: String, nullable: true }) message!: string | null;
  @ApiProperty() createdAt!: string;
  @ApiProperty({ type: String, nullable: true }) completedAt!: string | null;

  static from(s: RolloutStatus): RolloutDto {
    return {
      id: s.id, deploymentId: s.deploymentId, version: s.version, kind: s.kind, phase: s.phase, rulesTopic: s.rulesTopic,
      rulesOffset: s.rulesOffset, acknowledgedSubtasks: s.acknowledgedSubtasks, totalSubtasks: s.totalSubtasks,
      subtasks: s.subtasks.map(subtaskDto), message: s.message, createdAt: s.createdAt.toISOString(), completedAt: s.completedAt?.toISOString() ?? null,
    };
  }
}

export class CreatedRuleSetVersionDto extends RuleSetVersionDto {
  @ApiProperty({ type: RolloutDto }) rollout!: RolloutDto;
}

export class ShadowAlertDto {
  @ApiProperty() alertId!: string;
  @ApiProperty() ruleId!: string;
  @ApiProperty() ruleVersion!: number;
  @ApiProperty() key!: string;
  @ApiProperty() aggregate!: number;
  @ApiProperty() limit!: number;
  @ApiProperty() txId!: string;
  @ApiProperty() ts!: number;
}

export class ShadowResultsDto {
  @ApiProperty() version!: number;
  @ApiProperty({ description: 'The shadow-alerts topic read' }) topic!: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' } }) alertsByRule!: Record<string, number>;
  @ApiProperty() totalAlerts!: number;
  @ApiProperty({ type: [ShadowAlertDto] }) alerts!: ShadowAlertDto[];
  @ApiProperty() scannedRecords!: number;
  @ApiProperty({ description: 'The scan stopped at its bounds before the end of the topic' }) truncated!: boolean;
}

function subtaskDto(s: SubtaskProgress): SubtaskProgressDto {
  return {
    ...s, rejected: s.rejected.map((r) => ({ ruleId: r.ruleId, problems: [...r.problems] })), inputPosition: s.inputPosition ? { ...s.inputPosition } : null,
    lastAckAt: s.lastAckAt?.toISOString() ?? null,
  };
}

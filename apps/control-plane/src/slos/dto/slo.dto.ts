import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { SLO_EVENT_KINDS, SLO_PERCENTILES, SLO_STATES, type Slo, type SloEvent } from '../slo';

export class CreateSloDto {
  @ApiProperty({ example: 'checkout p99', minLength: 1, maxLength: 200 }) name!: string;
  @ApiProperty({ description: 'The deployment whose event-time latency is held to the objective' }) deploymentId!: string;
  @ApiPropertyOptional({ enum: SLO_PERCENTILES, default: 'p99' }) percentile?: string;
  @ApiProperty({ example: 500, description: 'Latency bound in milliseconds at the percentile (0 < x ≤ 3600000)' }) thresholdMs!: number;
  @ApiProperty({ example: 0.99, description: 'Fraction of minutes that must meet the bound, in (0, 1)' }) target!: number;
  @ApiPropertyOptional({ default: 60, minimum: 5, maximum: 43200, description: 'Compliance window in minutes' }) windowMinutes?: number;
}

export class SloStatusDto {
  @ApiProperty({ enum: SLO_STATES, description: 'NO_DATA before any minute with samples; BREACHED while compliance < target' }) state!: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', description: 'The minute of the last evaluation' }) evaluatedMinute!: string | null;
  @ApiProperty() goodMinutes!: number;
  @ApiProperty() badMinutes!: number;
  @ApiProperty({ nullable: true, type: Number, description: 'good / (good + bad) over the window' }) compliance!: number | null;
  @ApiProperty({ nullable: true, type: Number, description: '(bad / (good + bad)) / (1 − target) over the window' }) burnRate!: number | null;
  @ApiProperty({ nullable: true, type: Number, description: 'The burn rate over the last 5 minutes' }) burnRate5m!: number | null;
  @ApiProperty({ nullable: true, type: Number, description: '1 − burnRate' }) errorBudgetRemaining!: number | null;
}

export class SloDto {
  @ApiProperty() id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() deploymentId!: string;
  @ApiProperty({ enum: SLO_PERCENTILES }) percentile!: string;
  @ApiProperty() thresholdMs!: number;
  @ApiProperty() target!: number;
  @ApiProperty() windowMinutes!: number;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ type: SloStatusDto }) status!: SloStatusDto;

  static from(slo: Slo): SloDto {
    const s = slo.status;
    return {
      id: slo.id,
      name: slo.name,
      deploymentId: slo.deploymentId,
      percentile: slo.percentile,
      thresholdMs: slo.thresholdMs,
      target: slo.target,
      windowMinutes: slo.windowMinutes,
      createdAt: slo.createdAt.toISOString(),
      status: {
        state: s.state,
        evaluatedMinute: s.minute === null ? null : new Date(s.minute).toISOString(),
        goodMinutes: s.goodMinutes,
        badMinutes: s.badMinutes,
        compliance: s.compliance,
        burnRate: s.burnRate,
        burnRate5m: s.burnRate5m,
        errorBudgetRemaining: s.errorBudgetRemaining,
      },
    };
  }
}

export class SloPageDto {
  @ApiProperty({ type: [SloDto] }) items!: SloDto[];
  @ApiProperty({ nullable: true, type: String }) nextCursor!: string | null;
}

export class SloEventDto {
  @ApiProperty() id!: string;
  @ApiProperty() sloId!: string;
  @ApiProperty({ enum: SLO_EVENT_KINDS }) kind!: string;
  @ApiProperty({ format: 'date-time', description: 'The minute whose evaluation changed the state' }) minute!: string;
  @ApiProperty() compliance!: number;
  @ApiProperty() burnRate!: number;
  @ApiProperty({ nullable: true, type: Number }) burnRate5m!: number | null;
  @ApiProperty() reason!: string;
  @ApiProperty({ format: 'date-time' }) at!: string;

  static from(e: SloEvent): SloEventDto {
    return {
      id: e.id, sloId: e.sloId, kind: e.kind, minute: e.minute.toISOString(), compliance: e.compliance,
      burnRate: e.burnRate, burnRate5m: e.burnRate5m, reason: e.reason, at: e.at.toISOString(),
    };
  }
}

export class SloEventPageDto {
  @ApiProperty({ type: [SloEventDto] }) items!: SloEventDto[];
  @ApiProperty({ nullable: true, type: String }) nextCursor!: string | null;
}

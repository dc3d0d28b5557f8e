import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import type { Slo, SloEvaluation, SloEvent, SloStatusMessage } from '../../slos/slo';

export enum SloPercentileEnum {
  p50 = 'p50',
  p95 = 'p95',
  p99 = 'p99',
  p999 = 'p999',
}
registerEnumType(SloPercentileEnum, { name: 'SloPercentile' });

export enum SloStateEnum {
  NO_DATA = 'NO_DATA',
  OK = 'OK',
  BREACHED = 'BREACHED',
}
registerEnumType(SloStateEnum, {
  name: 'SloState',
  description: 'NO_DATA before any minute with samples; BREACHED while compliance is below the target; OK otherwise.',
});

export enum SloEventKindEnum {
  BREACH = 'BREACH',
  RECOVERED = 'RECOVERED',
}
registerEnumType(SloEventKindEnum, { name: 'SloEventKind' });

@ObjectType('SloStatus', { description: 'The latest evaluation of an SLO (each minute, at its close).' })
export class SloStatusModel {
  @Field(() => SloStateEnum) state!: SloStateEnum;
  @Field(() => Date, { nullable: true, description: 'The minute evaluated last' }) evaluatedMinute!: Date | null;
  @Field(() => Int) goodMinutes!: number;
  @Field(() => Int) badMinutes!: number;
  @Field(() => Float, { nullable: true, description: 'good / (good + bad) over the window' }) compliance!: number | null;
  @Field(() => Float, { nullable: true, description: '(bad / (good + bad)) / (1 − target) over the window' }) burnRate!: number | null;
  @Field(() => Float, { nullable: true, description: 'The burn rate over the last 5 minutes' }) burnRate5m!: number | null;
  @Field(() => Float, { nullable: true, description: '1 − burnRate (negative once the budget is overspent)' }) errorBudgetRemaining!: number | null;

  static from(e: SloEvaluation): SloStatusModel {
    return {
      state: e.state as SloStateEnum,
      evaluatedMinute: e.minute === null ? null : new Date(e.minute),
      goodMinutes: e.goodMinutes,
      badMinutes: e.badMinutes,
      compliance: e.compliance,
      burnRate: e.burnRate,
      burnRate5m: e.burnRate5m,
      errorBudgetRemaining: e.errorBudgetRemaining,
    };
  }
}

@ObjectType('Slo', { description: "A latency SLO: `percentile` of a deployment's event-time latency ≤ thresholdMs in `target` of the minutes of the window." })
export class SloModel {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => ID) deploymentId!: string;
  @Field(() => SloPercentileEnum) percentile!: SloPercentileEnum;
  @Field(() => Float) thresholdMs!: number;
  @Field(() => Float, { description: 'Fraction of good minutes required, in (0, 1)' }) target!: number;
  @Field(() => Int) windowMinutes!: number;
  @Field() createdAt!: Date;
  @Field(() => SloStatusModel) status!: SloStatusModel;

  static from(slo: Slo): SloModel {
    return {
      id: slo.id,
      name: slo.name,
      deploymentId: slo.deploymentId,
      percentile: slo.percentile as SloPercentileEnum,
      thresholdMs: slo.thresholdMs,
      target: slo.target,
      windowMinutes: slo.windowMinutes,
      createdAt: slo.createdAt,
      status: SloStatusModel.from(slo.status),
    };
  }
}

@ObjectType()
export class SloPage {
  @Field(() => [SloModel]) items!: SloModel[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@ObjectType('SloEvent', { description: 'A breach (compliance fell below the target) or a recovery.' })
export class SloEventModel {
  @Field(() => ID) id!: string;
  @Field(() => SloEventKindEnum) kind!: SloEventKindEnum;
  @Field() minute!: Date;
  @Field(() => Float) compliance!: number;
  @Field(() => Float) burnRate!: number;
  @Field(() => Float, { nullable: true }) burnRate5m!: number | null;
  @Field() reason!: string;
  @Field() at!: Date;

  static from(e: SloEvent): SloEventModel {
    return { ...e, kind: e.kind as SloEventKindEnum };
  }
}

@ObjectType('SloStatusUpdate', { description: 'Pushed after every evaluation of the SLO (once a minute while its deployment reports).' })
export class SloStatusUpdateModel extends SloStatusModel {
  @Field(() => ID) sloId!: string;
  @Field(() => ID) deploymentId!: string;
  @Field(() => SloEventKindEnum, { nullable: true, description: 'Set when this evaluation changed the state' }) event!: SloEventKindEnum | null;
  @Field() at!: Date;

  static fromMessage(m: SloStatusMessage): SloStatusUpdateModel {
    return { ...SloStatusModel.from(m), sloId: m.sloId, deploymentId: m.deploymentId, event: m.event as SloEventKindEnum | null, at: new Date(m.at) };
  }
}

@InputType('CreateSloInput', { description: 'A new latency SLO; validated like POST /v1/slos.' })
export class CreateSloInputModel {
  @Field() name!: string;
  @Field(() => ID) deploymentId!: string;
  @Field(() => SloPercentileEnum, { nullable: true, description: 'Default p99' }) percentile?: SloPercentileEnum;
  @Field(() => Float, { description: 'Milliseconds, 0 < x ≤ 3600000' }) thresholdMs!: number;
  @Field(() => Float, { description: 'In (0, 1): 0.99 for 99%' }) target!: number;
  @Field(() => Int, { nullable: true, description: 'Default 60; 5 to 43200' }) windowMinutes?: number;
}

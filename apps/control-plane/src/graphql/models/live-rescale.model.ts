import { Field, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { RESCALE_MODES, RESCALE_STATES, type LiveRescale } from '../../deployments/deployment';
import type { RescaleMessage } from '../../rescales/rescale-events';
import { ParallelismModel } from './parallelism.model';

export enum RescaleModeEnum {
  live = 'live',
  restart = 'restart',
}
registerEnumType(RescaleModeEnum, {
  name: 'RescaleMode',
  description: 'live: processes join or retire and key groups move while the job runs (a restart where the run cannot change live); restart: stop and restore at the new parallelism.',
});

export enum RescaleStateEnum {
  PENDING = 'PENDING',
  JOINING = 'JOINING',
  MOVING = 'MOVING',
  DONE = 'DONE',
  FAILED = 'FAILED',
  FELL_BACK = 'FELL_BACK',
}
registerEnumType(RescaleStateEnum, {
  name: 'RescaleState',
  description:
    'PENDING: placing the joining processes; JOINING: sending their commands; MOVING: process 0 moves key groups; DONE; FAILED: given up; FELL_BACK: not possible live, restarted at the new parallelism instead.',
});

// Compile-time: the enums list exactly the deployments' values.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const _enums: [Same<`${RescaleModeEnum}`, (typeof RESCALE_MODES)[number]>, Same<`${RescaleStateEnum}`, (typeof RESCALE_STATES)[number]>] = [true, true];
void _enums;

@ObjectType('LiveRescale', { description: 'A live rescale of a running run: processes joining or retiring, key groups moving while the job runs.' })
export class LiveRescaleModel {
  @Field() rescaleId!: string;
  @Field(() => Int, { description: 'The run rescaled in place (it keeps its number)' }) runNo!: number;
  @Field(() => RescaleStateEnum) state!: RescaleStateEnum;
  @Field(() => ParallelismModel) fromParallelism!: ParallelismModel;
  @Field(() => ParallelismModel) toParallelism!: ParallelismModel;
  @Field(() => Int) fromProcesses!: number;
  @Field(() => Int) toProcesses!: number;
  @Field(() => Int, { description: 'Key groups moved so far' }) moved!: number;
  @Field(() => Int, { description: 'Key groups to move (0 until process 0 has planned the moves)' }) total!: number;
  @Field({ description: 'What it does or waits for; once settled, why it ended so' }) reason!: string;
  @Field() requestedAt!: Date;
  @Field(() => Date, { nullable: true }) finishedAt!: Date | null;

  static from(r: LiveRescale): LiveRescaleModel {
    return {
      rescaleId: r.rescaleId,
      runNo: r.runNo,
      state: r.state as RescaleStateEnum,
      fromParallelism: ParallelismModel.from(r.fromParallelism),
      toParallelism: ParallelismModel.from(r.toParallelism),
      fromProcesses: r.fromProcesses,
      toProcesses: r.toProcesses,
      moved: r.moved,
      total: r.total,
      reason: r.reason,
      requestedAt: r.requestedAt,
      finishedAt: r.finishedAt,
    };
  }

  static fromMessage(m: RescaleMessage): LiveRescaleModel {
    return LiveRescaleModel.from({ ...m, report: null, requestedAt: new Date(m.requestedAt), joinedAt: null, startedAt: null, finishedAt: m.finishedAt === null ? null : new Date(m.finishedAt) });
  }
}

import { Field, ID, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import type { KeyGroupMove, MOVE_STATES } from '../../moves/key-group-move';
import { toMoveMessage, type KeyGroupMoveMessage } from '../../moves/key-group-move-events';

export enum KeyGroupMoveStateEnum {
  PENDING = 'PENDING',
  DONE = 'DONE',
  FAILED = 'FAILED',
}
registerEnumType(KeyGroupMoveStateEnum, {
  name: 'KeyGroupMoveState',
  description: 'PENDING until process 0’s worker reports the move; DONE with its report; FAILED with the reason (also when its run ended first).',
});
// Compile-time: the enum lists exactly the moves' states.
const _states: [`${KeyGroupMoveStateEnum}`] extends [(typeof MOVE_STATES)[number]] ? ([(typeof MOVE_STATES)[number]] extends [`${KeyGroupMoveStateEnum}`] ? true : never) : never = true;
void _states;

@ObjectType('KeyGroupMoveStep', { description: 'One key group of a move: its owner when the move was requested, and where it goes.' })
export class KeyGroupMoveStepModel {
  @Field(() => Int) keyGroup!: number;
  @Field(() => Int) fromSubtask!: number;
  @Field(() => Int) toSubtask!: number;
}

@ObjectType('MovedKeyGroup', { description: 'One key group as the move handed it over.' })
export class MovedKeyGroupModel extends KeyGroupMoveStepModel {
  @Field({ description: 'Bytes of the state image handed over' }) bytes!: number;
  @Field({ description: 'How long its input waited: from the release’s start to the adoption’s end' }) pauseMs!: number;
}

@ObjectType('KeyGroupMoveReport', { description: 'What a DONE move did.' })
export class KeyGroupMoveReportModel {
  @Field(() => [MovedKeyGroupModel]) moved!: MovedKeyGroupModel[];
  @Field({ description: 'The whole move, as process 0 led it' }) durationMs!: number;
}

@ObjectType('KeyGroupMove', {
  description: 'A live move of key groups of one keyed operator between subtasks of a running run (REST: /v1/deployments/{id}/key-group-moves).',
})
export class KeyGroupMoveModel {
  @Field(() => ID) moveId!: string;
  @Field(() => ID) deploymentId!: string;
  @Field(() => Int, { description: 'The run whose key groups it moves' }) runNo!: number;
  @Field() operatorId!: string;
  @Field(() => KeyGroupMoveStateEnum) state!: KeyGroupMoveStateEnum;
  @Field(() => [KeyGroupMoveStepModel]) moves!: KeyGroupMoveStepModel[];
  @Field() reason!: string;
  @Field({ description: 'Who asked: the API key id' }) requestedBy!: string;
  @Field(() => KeyGroupMoveReportModel, { nullable: true, description: 'Once DONE' }) report!: KeyGroupMoveReportModel | null;
  @Field(() => String, { nullable: true, description: 'Why it FAILED' }) failure!: string | null;
  @Field() requestedAt!: Date;
  @Field(() => Date, { nullable: true, description: 'When the command went to process 0’s worker' }) startedAt!: Date | null;
  @Field(() => Date, { nullable: true }) finishedAt!: Date | null;

  static from(m: KeyGroupMove): KeyGroupMoveModel {
    return KeyGroupMoveModel.fromMessage(toMoveMessage(m));
  }

  /** From what the moves channel carries (times as epoch ms). */
  static fromMessage(m: KeyGroupMoveMessage): KeyGroupMoveModel {
    const at = (ms: number | null) => (ms === null ? null : new Date(ms));
    return {
      moveId: m.moveId,
      deploymentId: m.deploymentId,
      runNo: m.runNo,
      operatorId: m.operatorId,
      state: m.state as KeyGroupMoveStateEnum,
      moves: m.moves.map((s) => ({ ...s })),
      reason: m.reason,
      requestedBy: m.requestedBy,
      report: m.report ? { moved: m.report.moved.map((k) => ({ ...k })), durationMs: m.report.durationMs } : null,
      failure: m.failure,
      requestedAt: new Date(m.requestedAt),
      startedAt: at(m.startedAt),
      finishedAt: at(m.finishedAt),
    };
  }
}

@ObjectType()
export class KeyGroupMovePage {
  @Field(() => [KeyGroupMoveModel], { description: 'Newest first' }) items!: KeyGroupMoveModel[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

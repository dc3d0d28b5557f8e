import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MOVE_STATES, type KeyGroupMove } from './key-group-move';

export class KeyGroupMoveRequestItemDto {
  @ApiProperty({ minimum: 0, description: 'A key group of the operator (below the bundle’s maxParallelism)' }) keyGroup!: number;
  @ApiProperty({ minimum: 0, description: 'The subtask to own it (below the operator’s parallelism)' }) toSubtask!: number;
}

export class MoveKeyGroupsRequestDto {
  @ApiProperty({ description: 'A keyed operator of the bundle' }) operatorId!: string;
  @ApiProperty({ type: [KeyGroupMoveRequestItemDto], description: 'Each key group once; none already on its target subtask' }) moves!: KeyGroupMoveRequestItemDto[];
  @ApiPropertyOptional({ maxLength: 500, description: 'Why, for the record (the worker logs it too)' }) reason?: string;
}

export class KeyGroupMoveStepDto {
  @ApiProperty() keyGroup!: number;
  @ApiProperty({ description: 'Its owner in the run’s routing when the move was requested' }) fromSubtask!: number;
  @ApiProperty() toSubtask!: number;
}

export class MovedKeyGroupDto extends KeyGroupMoveStepDto {
  @ApiProperty({ description: 'Bytes of the state image handed over' }) bytes!: number;
  @ApiProperty({ description: 'From the release’s start to the adoption’s end: how long the key group’s input waited' }) pauseMs!: number;
}

export class MoveReportDto {
  @ApiProperty({ type: [MovedKeyGroupDto] }) moved!: MovedKeyGroupDto[];
  @ApiProperty({ description: 'The whole move, as process 0 led it' }) durationMs!: number;
}

export class KeyGroupMoveDto {
  @ApiProperty() moveId!: string;
  @ApiProperty() deploymentId!: string;
  @ApiProperty({ description: 'The run whose key groups it moves' }) runNo!: number;
  @ApiProperty() operatorId!: string;
  @ApiProperty({ enum: MOVE_STATES, description: 'PENDING until process 0’s worker reports it; FAILED also when its run ended first' }) state!: string;
  @ApiProperty({ type: [KeyGroupMoveStepDto] }) moves!: KeyGroupMoveStepDto[];
  @ApiProperty() reason!: string;
  @ApiProperty({ description: 'Who asked: the API key id' }) requestedBy!: string;
  @ApiProperty({ type: MoveReportDto, nullable: true, description: 'Once DONE: per key group its bytes and pause, and the total duration' }) report!: MoveReportDto | null;
  @ApiProperty({ type: String, nullable: true, description: 'Why it FAILED' }) failure!: string | null;
  @ApiProperty({ format: 'date-time' }) requestedAt!: string;
  @ApiProperty({ format: 'date-time', nullable: true, description: 'When the command went to process 0’s worker' }) startedAt!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true }) finishedAt!: string | null;

  static from(m: KeyGroupMove): KeyGroupMoveDto {
    const iso = (d: Date | null) => (d ? d.toISOString() : null);
    return {
      moveId: m.moveId,
      deploymentId: m.deploymentId,
      runNo: m.runNo,
      operatorId: m.operatorId,
      state: m.state,
      moves: m.moves.map((s) => ({ keyGroup: s.keyGroup, fromSubtask: s.fromSubtask, toSubtask: s.toSubtask })),
      reason: m.reason,
      requestedBy: m.requestedBy,
      report: m.report ? { moved: m.report.moved.map((k) => ({ ...k })), durationMs: m.report.durationMs } : null,
      failure: m.failure,
      requestedAt: m.requestedAt.toISOString(),
      startedAt: iso(m.startedAt),
      finishedAt: iso(m.finishedAt),
    };
  }
}

export class KeyGroupMovePageDto {
  @ApiProperty({ type: [KeyGroupMoveDto], description: 'Newest first' }) items!: KeyGroupMoveDto[];
  @ApiProperty({ type: String, nullable: true }) nextCursor!: string | null;
}

import { ApiProperty } from '@nestjs/swagger';
import { WORKER_STATUSES, type Worker, type WorkerStatus } from '../worker';

export class RunningSubtaskDto {
  @ApiProperty() tenantId!: string;
  @ApiProperty() jobId!: string;
  @ApiProperty() operatorId!: string;
  @ApiProperty({ minimum: 0 }) subtask!: number;
  @ApiProperty({ enum: ['STARTING', 'RUNNING', 'STOPPING', 'FAILED', 'LOST'], description: 'FAILED: the job reported its failure; LOST: its job host died unreported' })
  state!: string;
  @ApiProperty({ minimum: 0, description: 'The job host process of its run that runs it' }) process!: number;
}

export class WorkerDto {
  @ApiProperty({ example: 'worker-1' }) id!: string;
  @ApiProperty() host!: string;
  @ApiProperty() pid!: number;
  @ApiProperty({ description: 'How many subtasks the worker can host' }) slots!: number;
  @ApiProperty({ description: 'Weir version the worker runs' }) version!: string;
  @ApiProperty({
    enum: WORKER_STATUSES,
    description: 'ALIVE: heartbeating; LOST: silent for three heartbeat intervals; STOPPED: shut down cleanly',
  })
  status!: WorkerStatus;
  @ApiProperty({ format: 'date-time' }) startedAt!: string;
  @ApiProperty({ format: 'date-time' }) lastSeenAt!: string;
  @ApiProperty({ format: 'date-time' }) statusChangedAt!: string;
  @ApiProperty({ description: "The worker's heartbeat interval in milliseconds" }) heartbeatMs!: number;
  @ApiProperty({ type: [RunningSubtaskDto] }) runningSubtasks!: RunningSubtaskDto[];

  static from(worker: Worker): WorkerDto {
    return {
      id: worker.id,
      host: worker.host,
      pid: worker.pid,
      slots: worker.slots,
      version: worker.version,
      status: worker.status,
      startedAt: worker.startedAt.toISOString(),
      lastSeenAt: worker.lastSeenAt.toISOString(),
      statusChangedAt: worker.statusChangedAt.toISOString(),
      heartbeatMs: worker.heartbeatMs,
      runningSubtasks: worker.runningSubtasks.map((s) => ({ ...s, process: s.process ?? 0 })),
    };
  }
}

export class WorkerPageDto {
  @ApiProperty({ type: [WorkerDto] }) items!: WorkerDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  nextCursor!: string | null;
}

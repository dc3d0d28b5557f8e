import { Field, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { WORKER_STATUSES, type Worker, type WorkerStatus } from '../../workers/worker';

export enum WorkerStatusEnum {
  ALIVE = 'ALIVE',
  LOST = 'LOST',
  STOPPED = 'STOPPED',
}
registerEnumType(WorkerStatusEnum, {
  name: 'WorkerStatus',
  description: 'ALIVE: heartbeating; LOST: silent for three heartbeat intervals; STOPPED: shut down cleanly.',
});
// Compile-time: the GraphQL enum lists exactly the registry's statuses.
const _statuses: Record<WorkerStatus, WorkerStatusEnum> = { ALIVE: WorkerStatusEnum.ALIVE, LOST: WorkerStatusEnum.LOST, STOPPED: WorkerStatusEnum.STOPPED };
void _statuses;
void WORKER_STATUSES;

@ObjectType('RunningSubtask')
export class RunningSubtaskModel {
  @Field() tenantId!: string;
  @Field() jobId!: string;
  @Field() operatorId!: string;
  @Field(() => Int) subtask!: number;
  @Field({ description: 'STARTING, RUNNING, STOPPING, FAILED (reported by the job) or LOST (its job host died unreported)' }) state!: string;
  @Field(() => Int, { description: 'The job host process of its run that runs it' }) process!: number;
}

@ObjectType('Worker', { description: 'A worker process of the fleet, as the registry last heard it (platform view).' })
export class WorkerModel {
  @Field() id!: string;
  @Field() host!: string;
  @Field(() => Int) pid!: number;
  @Field(() => Int, { description: 'How many subtasks the worker can host' }) slots!: number;
  @Field() version!: string;
  @Field(() => WorkerStatusEnum) status!: WorkerStatusEnum;
  @Field() startedAt!: Date;
  @Field() lastSeenAt!: Date;
  @Field() statusChangedAt!: Date;
  @Field(() => Int) heartbeatMs!: number;
  @Field(() => [RunningSubtaskModel], {
    description: "Subtasks the worker runs; only the caller's own tenant's subtasks are listed.",
  })
  runningSubtasks!: RunningSubtaskModel[];

  static from(worker: Worker, tenantId: string): WorkerModel {
    return {
      ...worker,
      status: worker.status as WorkerStatusEnum,
      runningSubtasks: worker.runningSubtasks.filter((s) => s.tenantId === tenantId).map((s) => ({ ...s, process: s.process ?? 0 })),
    };
  }
}

@ObjectType()
export class WorkerPage {
  @Field(() => [WorkerModel]) items!: WorkerModel[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

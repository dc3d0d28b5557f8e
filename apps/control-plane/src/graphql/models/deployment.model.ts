import { Field, ID, InputType, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { AUTOSCALER_MODES, DEPLOYMENT_STATUSES, DESIRED_STATES, PARTITIONER_MODES, UPGRADE_MODES, type Deployment, type RunLayout } from '../../deployments/deployment';
import { LiveRescaleModel, RescaleModeEnum } from './live-rescale.model';
import { ParallelismModel } from './parallelism.model';

export enum DeploymentStatusEnum {
  CREATED = 'CREATED',
  STARTING = 'STARTING',
  RUNNING = 'RUNNING',
  RESCALING = 'RESCALING',
  RECOVERING = 'RECOVERING',
  UPGRADING = 'UPGRADING',
  STOPPING = 'STOPPING',
  SUSPENDED = 'SUSPENDED',
  FAILED = 'FAILED',
  FINISHED = 'FINISHED',
  CANCELLED = 'CANCELLED',
}
registerEnumType(DeploymentStatusEnum, { name: 'DeploymentStatus', description: 'The observed status the reconciler drives.' });

export enum DesiredStateEnum {
  RUNNING = 'RUNNING',
  SUSPENDED = 'SUSPENDED',
  CANCELLED = 'CANCELLED',
}
registerEnumType(DesiredStateEnum, { name: 'DesiredState' });

export enum UpgradeModeEnum {
  stateless = 'stateless',
  savepoint = 'savepoint',
  last_state = 'last-state',
}
registerEnumType(UpgradeModeEnum, { name: 'UpgradeMode' });

export enum PartitionerModeEnum {
  off = 'off',
  recommend = 'recommend',
  auto = 'auto',
}
registerEnumType(PartitionerModeEnum, {
  name: 'PartitionerMode',
  description: "What the dynamic partitioner may do: off (nothing), recommend (records and pushes its decisions, changes nothing), auto (also makes each decision's key-group moves live).",
});

export enum AutoscalerModeEnum {
  off = 'off',
  recommend = 'recommend',
  auto = 'auto',
}
registerEnumType(AutoscalerModeEnum, {
  name: 'AutoscalerMode',
  description: 'What the autoscaler may do: off (nothing), recommend (records and pushes its decisions, changes nothing), auto (also asks for each SCALE_UP or SCALE_DOWN as a live rescale).',
});

// Compile-time: the GraphQL enums list exactly the deployments' values.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const _enums: [
  Same<`${DeploymentStatusEnum}`, (typeof DEPLOYMENT_STATUSES)[number]>,
  Same<`${DesiredStateEnum}`, (typeof DESIRED_STATES)[number]>,
  Same<`${UpgradeModeEnum}`, (typeof UPGRADE_MODES)[number]>,
  Same<`${PartitionerModeEnum}`, (typeof PARTITIONER_MODES)[number]>,
  Same<`${AutoscalerModeEnum}`, (typeof AUTOSCALER_MODES)[number]>,
] = [true, true, true, true, true];
void _enums;

@ObjectType('PendingUpgrade')
export class PendingUpgradeModel {
  @Field() bundleId!: string;
  @Field(() => UpgradeModeEnum) mode!: UpgradeModeEnum;
  @Field() requestedAt!: Date;
}

@ObjectType('TopicBinding', { description: "A job's logical topic name and the Kafka topic it is bound to (under t.<tenantId>.)." })
export class TopicBindingModel {
  @Field() name!: string;
  @Field() topic!: string;
}

@ObjectType('KeyGroupRange', { description: 'Key groups start..end, both included.' })
export class KeyGroupRangeModel {
  @Field(() => Int) start!: number;
  @Field(() => Int) end!: number;
}

@ObjectType('SubtaskAssignment', { description: 'One subtask of an operator and the key groups it owns.' })
export class SubtaskAssignmentModel {
  @Field() operatorId!: string;
  @Field(() => Int) subtask!: number;
  @Field(() => [KeyGroupRangeModel]) keyGroups!: KeyGroupRangeModel[];
}

@ObjectType('RunProcess', { description: 'One job host process of a run: one slot on its worker, running subtask `index` of every operator wide enough.' })
export class RunProcessModel {
  @Field(() => Int, { description: "Process 0 leads the run's checkpoints and savepoints" }) index!: number;
  @Field() workerId!: string;
  @Field(() => [SubtaskAssignmentModel]) subtasks!: SubtaskAssignmentModel[];
}

@ObjectType('RunLayout', { description: "Where a run's subtasks run: its processes in index order." })
export class RunLayoutModel {
  @Field(() => Int) runNo!: number;
  @Field(() => [RunProcessModel]) processes!: RunProcessModel[];

  static from(l: RunLayout): RunLayoutModel {
    return {
      runNo: l.runNo,
      processes: l.processes.map((p) => ({
        index: p.index,
        workerId: p.workerId,
        subtasks: p.subtasks.map((s) => ({ operatorId: s.operatorId, subtask: s.subtask, keyGroups: s.keyGroups.map(([start, end]) => ({ start, end })) })),
      })),
    };
  }
}

@ObjectType('Deployment', { description: "A tenant's running (or resting) job: desired state beside observed status." })
export class DeploymentModel {
  @Field(() => ID, { description: 'Also the job id its metrics carry' }) id!: string;
  @Field() name!: string;
  @Field() bundleId!: string;
  @Field(() => ParallelismModel) parallelism!: ParallelismModel;
  @Field(() => [TopicBindingModel]) topics!: TopicBindingModel[];
  @Field(() => DesiredStateEnum) desiredState!: DesiredStateEnum;
  @Field(() => DeploymentStatusEnum) status!: DeploymentStatusEnum;
  @Field({ description: 'Why the status is what it is' }) statusReason!: string;
  @Field(() => PendingUpgradeModel, { nullable: true }) pendingUpgrade!: PendingUpgradeModel | null;
  @Field(() => ParallelismModel, { nullable: true, description: 'A parallelism change not yet applied' }) pendingParallelism!: ParallelismModel | null;
  @Field(() => RescaleModeEnum, { nullable: true, description: 'How the pending parallelism change is made; null when none is pending' })
  pendingRescaleMode!: RescaleModeEnum | null;
  @Field(() => PartitionerModeEnum, { description: 'What the dynamic partitioner may do; its decisions are in scalingDecisions' }) partitionerMode!: PartitionerModeEnum;
  @Field(() => AutoscalerModeEnum, { description: 'What the autoscaler may do; its decisions are in scalingDecisions too' }) autoscalerMode!: AutoscalerModeEnum;
  @Field(() => Int, { description: 'Number of the latest run (0: never started)' }) runNo!: number;
  @Field(() => RunLayoutModel, { nullable: true, description: 'Where the open run runs (processes, workers, subtasks, key groups); null while no run is open' })
  layout!: RunLayoutModel | null;
  @Field(() => LiveRescaleModel, { nullable: true, description: 'The latest live rescale: in flight while RESCALING live, else how the last one ended; null when none' })
  rescale!: LiveRescaleModel | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
  @Field() statusChangedAt!: Date;

  static from(d: Deployment): DeploymentModel {
    return {
      id: d.id,
      name: d.name,
      bundleId: d.bundleId,
      parallelism: ParallelismModel.from(d.parallelism),
      topics: Object.entries(d.config.topics ?? {}).map(([name, topic]) => ({ name, topic })),
      desiredState: d.desiredState as DesiredStateEnum,
      status: d.status as DeploymentStatusEnum,
      statusReason: d.statusReason,
      pendingUpgrade: d.pendingUpgrade
        ? { bundleId: d.pendingUpgrade.bundleId, mode: d.pendingUpgrade.mode as UpgradeModeEnum, requestedAt: new Date(d.pendingUpgrade.requestedAt) }
        : null,
      pendingParallelism: d.pendingParallelism ? ParallelismModel.from(d.pendingParallelism) : null,
      pendingRescaleMode: d.pendingRescaleMode as RescaleModeEnum | null,
      partitionerMode: d.partitionerMode as PartitionerModeEnum,
      autoscalerMode: d.autoscalerMode as AutoscalerModeEnum,
      runNo: d.runNo,
      layout: d.layout ? RunLayoutModel.from(d.layout) : null,
      rescale: d.rescale ? LiveRescaleModel.from(d.rescale) : null,
      createdAt: d.createdAt,
      updatedAt: d.updatedAt,
      statusChangedAt: d.statusChangedAt,
    };
  }
}

@ObjectType()
export class DeploymentPage {
  @Field(() => [DeploymentModel]) items!: DeploymentModel[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@InputType('OperatorParallelismInput')
export class OperatorParallelismInput {
  @Field() operatorId!: string;
  @Field(() => Int) parallelism!: number;
}

@InputType('ParallelismInput', { description: 'Omitted parts keep the bundle defaults (or the current values).' })
export class ParallelismInputModel {
  @Field(() => Int, { nullable: true }) default?: number;
  @Field(() => [OperatorParallelismInput], { nullable: true }) operators?: OperatorParallelismInput[];
}

@InputType('TopicBindingInput')
export class TopicBindingInput {
  @Field() name!: string;
  @Field() topic!: string;
}

@InputType('CreateDeploymentInput', { description: 'As POST /v1/deployments: give bundleId, or bundleName and bundleVersion.' })
export class CreateDeploymentInputModel {
  @Field() name!: string;
  @Field({ nullable: true }) bundleId?: string;
  @Field({ nullable: true }) bundleName?: string;
  @Field({ nullable: true }) bundleVersion?: string;
  @Field(() => ParallelismInputModel, { nullable: true }) parallelism?: ParallelismInputModel;
  @Field(() => [TopicBindingInput], { nullable: true }) topics?: TopicBindingInput[];
  @Field(() => DesiredStateEnum, { nullable: true, description: 'RUNNING (default) or SUSPENDED' }) desiredState?: DesiredStateEnum;
  @Field(() => PartitionerModeEnum, { nullable: true, description: 'recommend (default), auto or off' }) partitionerMode?: PartitionerModeEnum;
  @Field(() => AutoscalerModeEnum, { nullable: true, description: 'recommend (default), auto or off' }) autoscalerMode?: AutoscalerModeEnum;
}

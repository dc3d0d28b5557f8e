import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  AUTOSCALER_MODES,
  DEPLOYMENT_STATUSES,
  DESIRED_STATES,
  PARTITIONER_MODES,
  RESCALE_MODES,
  RESCALE_STATES,
  RESUME_MODES,
  RUN_OUTCOMES,
  UPGRADE_MODES,
  type Deployment,
  type DeploymentRun,
  type DeploymentTransition,
  type LiveRescale,
  type RunLayout,
  type RunProcessLayout,
  type SubtaskAssignment,
} from '../deployment';

export class ParallelismDto {
  @ApiProperty({ minimum: 1, description: 'Parallelism of operators not named in `operators`' }) default!: number;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer', minimum: 1 }, description: 'Per operator id' })
  operators!: Record<string, number>;
}

export class DeploymentConfigDto {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Logical topic name → Kafka topic; every topic must start with `t.<tenantId>.`',
  })
  topics?: Record<string, string>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } }) properties?: Record<string, string>;
}

export class PendingUpgradeDto {
  @ApiProperty() bundleId!: string;
  @ApiProperty({ enum: UPGRADE_MODES }) mode!: string;
  @ApiProperty({ format: 'date-time' }) requestedAt!: string;
}

export class PendingRestoreDto {
  @ApiProperty({ description: 'A savepoint id, or "latest": the newest usable checkpoint' }) snapshotId!: string;
  @ApiProperty({ enum: ['requested', 'kept'], description: 'requested: a savepoint restore the tenant asked for; kept: the state kept when the deployment stopped' })
  origin!: string;
  @ApiProperty({ description: 'What will be restored, in words' }) reason!: string;
}

export class SubtaskAssignmentDto {
  @ApiProperty() operatorId!: string;
  @ApiProperty() subtask!: number;
  @ApiProperty({ type: 'array', items: { type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 2 }, description: 'Inclusive key-group ranges' })
  keyGroups!: number[][];

  static from(s: SubtaskAssignment): SubtaskAssignmentDto {
    return { operatorId: s.operatorId, subtask: s.subtask, keyGroups: s.keyGroups.map(([a, b]) => [a, b]) };
  }
}

export class ProcessLayoutDto {
  @ApiProperty({ description: 'The process index within its run (process 0 leads the run\'s checkpoints and savepoints)' }) index!: number;
  @ApiProperty({ description: 'The worker hosting this job host process (one slot there)' }) workerId!: string;
  @ApiProperty({ type: [SubtaskAssignmentDto], description: 'What it runs: subtask `index` of every operator whose parallelism exceeds `index`' })
  subtasks!: SubtaskAssignmentDto[];

  static from(p: RunProcessLayout): ProcessLayoutDto {
    return { index: p.index, workerId: p.workerId, subtasks: p.subtasks.map(SubtaskAssignmentDto.from) };
  }
}

export class RunLayoutDto {
  @ApiProperty() runNo!: number;
  @ApiProperty({ type: [ProcessLayoutDto], description: 'One job host process per slot, in index order' }) processes!: ProcessLayoutDto[];

  static from(l: RunLayout): RunLayoutDto {
    return { runNo: l.runNo, processes: l.processes.map(ProcessLayoutDto.from) };
  }
}

export class LiveRescaleDto {
  @ApiProperty({ example: 'r0193a1b2c3d4a1b2c3d4e5f6' }) rescaleId!: string;
  @ApiProperty({ description: 'The run rescaled in place (it keeps its number)' }) runNo!: number;
  @ApiProperty({
    enum: RESCALE_STATES,
    description:
      'PENDING: placing the joining processes; JOINING: sending their commands; MOVING: process 0 moves key groups; DONE; FAILED: given up (the reason says whether the job ran on as it was or recovered); FELL_BACK: not possible live, the deployment restarts at the new parallelism instead',
  })
  state!: string;
  @ApiProperty({ type: ParallelismDto }) fromParallelism!: ParallelismDto;
  @ApiProperty({ type: ParallelismDto }) toParallelism!: ParallelismDto;
  @ApiProperty({ description: 'Job host processes before' }) fromProcesses!: number;
  @ApiProperty({ description: 'Job host processes after' }) toProcesses!: number;
  @ApiProperty({ description: 'Key groups moved so far (process 0 reports its progress as it goes)' }) moved!: number;
  @ApiProperty({ description: 'Key groups to move (0 until process 0 has planned the moves)' }) total!: number;
  @ApiProperty({ description: 'What it does or waits for; once settled, why it ended so' }) reason!: string;
  @ApiProperty({ format: 'date-time' }) requestedAt!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) finishedAt!: string | null;

  static from(r: LiveRescale): LiveRescaleDto {
    return {
      rescaleId: r.rescaleId,
      runNo: r.runNo,
      state: r.state,
      fromParallelism: { default: r.fromParallelism.default, operators: { ...r.fromParallelism.operators } },
      toParallelism: { default: r.toParallelism.default, operators: { ...r.toParallelism.operators } },
      fromProcesses: r.fromProcesses,
      toProcesses: r.toProcesses,
      moved: r.moved,
      total: r.total,
      reason: r.reason,
      requestedAt: r.requestedAt.toISOString(),
      finishedAt: r.finishedAt?.toISOString() ?? null,
    };
  }
}

export class DeploymentDto {
  @ApiProperty({ example: 'd0193a1b2c3d4e5f6a7b8c9d0' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() bundleId!: string;
  @ApiProperty({ type: ParallelismDto }) parallelism!: ParallelismDto;
  @ApiProperty({ type: DeploymentConfigDto }) config!: DeploymentConfigDto;
  @ApiProperty({ enum: DESIRED_STATES }) desiredState!: string;
  @ApiProperty({ enum: DEPLOYMENT_STATUSES, description: 'Observed by the reconciler' }) status!: string;
  @ApiProperty({ description: 'Why the deployment is in its status, or what it waits for' }) statusReason!: string;
  @ApiProperty({ type: PendingUpgradeDto, nullable: true }) pendingUpgrade!: PendingUpgradeDto | null;
  @ApiProperty({ type: ParallelismDto, nullable: true }) pendingParallelism!: ParallelismDto | null;
  @ApiProperty({ enum: RESCALE_MODES, nullable: true, description: 'How the pending parallelism change is made; null when none is pending' })
  pendingRescaleMode!: string | null;
  @ApiProperty({
    type: PendingRestoreDto,
    nullable: true,
    description: 'What the next run starts from (a resume, a requested restore); null: the status decides (a fresh start, or the latest checkpoint for a recovery)',
  })
  pendingRestore!: PendingRestoreDto | null;
  @ApiProperty({ type: String, nullable: true, description: 'The savepoint of a stop-with-savepoint in flight: the desired state becomes SUSPENDED once it is taken' })
  pendingStopSavepointId!: string | null;
  @ApiProperty({ enum: PARTITIONER_MODES, description: "What the dynamic partitioner may do: off (nothing), recommend (records and pushes its decisions, changes nothing), auto (also makes each decision's key-group moves live); GET …/scaling-decisions lists its decisions" })
  partitionerMode!: string;
  @ApiProperty({ enum: AUTOSCALER_MODES, description: "What the autoscaler may do: off (nothing), recommend (records and pushes its SCALE_UP, SCALE_DOWN and HOLD decisions, changes nothing), auto (also asks for each SCALE_UP or SCALE_DOWN as a live rescale); GET …/scaling-decisions lists its decisions beside the partitioner's" })
  autoscalerMode!: string;
  @ApiProperty({ description: 'Number of the latest run; 0 before the first start' }) runNo!: number;
  @ApiProperty({
    type: RunLayoutDto,
    nullable: true,
    description: 'Where the open run runs: its job host processes, each with its worker and the subtasks (operator, subtask, key-group ranges) it runs; null while no run is open',
  })
  layout!: RunLayoutDto | null;
  @ApiProperty({
    type: LiveRescaleDto,
    nullable: true,
    description: 'The latest live rescale: in flight while the deployment is RESCALING live (with its progress), else how the last one ended; null when there was none',
  })
  rescale!: LiveRescaleDto | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;
  @ApiProperty({ format: 'date-time' }) statusChangedAt!: string;

  static from(d: Deployment): DeploymentDto {
    return {
      id: d.id,
      name: d.name,
      bundleId: d.bundleId,
      parallelism: { default: d.parallelism.default, operators: { ...d.parallelism.operators } },
      config: d.config,
      desiredState: d.desiredState,
      status: d.status,
      statusReason: d.statusReason,
      pendingUpgrade: d.pendingUpgrade,
      pendingParallelism: d.pendingParallelism,
      pendingRescaleMode: d.pendingRescaleMode,
      pendingRestore: d.pendingRestore ? { snapshotId: d.pendingRestore.snapshotId, origin: d.pendingRestore.origin, reason: d.pendingRestore.reason } : null,
      pendingStopSavepointId: d.pendingStop?.savepointId ?? null,
      partitionerMode: d.partitionerMode,
      autoscalerMode: d.autoscalerMode,
      runNo: d.runNo,
      layout: d.layout ? RunLayoutDto.from(d.layout) : null,
      rescale: d.rescale ? LiveRescaleDto.from(d.rescale) : null,
      createdAt: d.createdAt.toISOString(),
      updatedAt: d.updatedAt.toISOString(),
      statusChangedAt: d.statusChangedAt.toISOString(),
    };
  }
}

export class DeploymentPageDto {
  @ApiProperty({ type: [DeploymentDto] }) items!: DeploymentDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  nextCursor!: string | null;
}

export class RunDto {
  @ApiProperty() runNo!: number;
  @ApiProperty({ description: "Process 0's worker (the whole run's, when it runs in one process)" }) workerId!: string;
  @ApiProperty() bundleId!: string;
  @ApiProperty({ description: 'Slots the run holds: one per process, each on its own worker' }) slots!: number;
  @ApiProperty({ type: [SubtaskAssignmentDto], description: 'Every subtask of the run, across its processes' }) subtasks!: SubtaskAssignmentDto[];
  @ApiProperty({ type: [ProcessLayoutDto], description: 'The layout: which process ran which subtasks on which worker' }) processes!: ProcessLayoutDto[];
  @ApiProperty({ type: Object, nullable: true, description: 'Checkpoint or savepoint the run restored at start; null for a fresh start' })
  restoreFrom!: { snapshotId: string; location: string } | null;
  @ApiProperty() startedReason!: string;
  @ApiProperty({ format: 'date-time' }) placedAt!: string;
  @ApiProperty({ format: 'date-time', nullable: true }) dispatchedAt!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true }) runningAt!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true }) stopSentAt!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true }) endedAt!: string | null;
  @ApiProperty({ enum: RUN_OUTCOMES, nullable: true }) outcome!: string | null;
  @ApiProperty({ type: String, nullable: true }) endReason!: string | null;

  static from(r: DeploymentRun): RunDto {
    const iso = (d: Date | null) => (d ? d.toISOString() : null);
    return {
      runNo: r.runNo,
      workerId: r.workerId,
      bundleId: r.bundleId,
      slots: r.slots,
      subtasks: r.subtasks.map(SubtaskAssignmentDto.from),
      processes: r.processes.map(ProcessLayoutDto.from),
      restoreFrom: r.restoreFrom,
      startedReason: r.startedReason,
      placedAt: r.placedAt.toISOString(),
      dispatchedAt: iso(r.dispatchedAt),
      runningAt: iso(r.runningAt),
      stopSentAt: iso(r.stopSentAt),
      endedAt: iso(r.endedAt),
      outcome: r.outcome,
      endReason: r.endReason,
    };
  }
}

export class TransitionDto {
  @ApiProperty({ enum: DEPLOYMENT_STATUSES, nullable: true }) from!: string | null;
  @ApiProperty({ enum: DEPLOYMENT_STATUSES }) to!: string;
  @ApiProperty() reason!: string;
  @ApiProperty({ type: Number, nullable: true }) runNo!: number | null;
  @ApiProperty({ format: 'date-time' }) at!: string;

  static from(t: DeploymentTransition): TransitionDto {
    return { from: t.from, to: t.to, reason: t.reason, runNo: t.runNo, at: t.at.toISOString() };
  }
}

export class DeploymentHistoryDto {
  @ApiProperty({ type: [RunDto], description: 'Every run, newest first (at most 100)' }) runs!: RunDto[];
  @ApiProperty({ type: [TransitionDto], description: 'Transitions in order, one page' }) transitions!: TransitionDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Cursor of the next page of transitions' }) nextCursor!: string | null;
}

export class CreateDeploymentRequestDto {
  @ApiProperty({ example: 'fraud-scoring' }) name!: string;
  @ApiPropertyOptional({ description: 'The bundle by name and version (or give bundleId)', example: { name: 'page-views', version: '1.0.0' } })
  bundle?: { name: string; version: string };
  @ApiPropertyOptional({ description: 'The bundle by id (or give bundle)' }) bundleId?: string;
  @ApiPropertyOptional({ description: "Default: the manifest's defaultParallelism for every operator" }) parallelism?: Partial<ParallelismDto>;
  @ApiPropertyOptional({ type: DeploymentConfigDto }) config?: DeploymentConfigDto;
  @ApiPropertyOptional({ enum: ['RUNNING', 'SUSPENDED'], default: 'RUNNING' }) desiredState?: string;
  @ApiPropertyOptional({ enum: PARTITIONER_MODES, default: 'recommend', description: "What the dynamic partitioner may do: off (nothing), recommend (records and pushes its decisions, changes nothing), auto (also makes each decision's key-group moves live); GET …/scaling-decisions lists its decisions" })
  partitionerMode?: string;
  @ApiPropertyOptional({ enum: AUTOSCALER_MODES, default: 'recommend', description: "What the autoscaler may do: off (nothing), recommend (records and pushes its SCALE_UP, SCALE_DOWN and HOLD decisions, changes nothing), auto (also asks for each SCALE_UP or SCALE_DOWN as a live rescale); GET …/scaling-decisions lists its decisions beside the partitioner's" })
  autoscalerMode?: string;
}

export class PatchDeploymentRequestDto {
  @ApiPropertyOptional({ enum: DESIRED_STATES, description: 'CANCELLED is final' }) desiredState?: string;
  @ApiPropertyOptional({ description: 'A new parallelism: the deployment goes through RESCALING' }) parallelism?: Partial<ParallelismDto>;
  @ApiPropertyOptional({
    enum: RESCALE_MODES,
    default: 'live',
    description:
      'With parallelism: live starts or retires job host processes and moves key groups to or from them while the job runs (RESCALING shows its progress in `rescale`), and restarts where the run cannot change live (the reason says why); restart stops the job and restores it at the new parallelism from its latest checkpoint',
  })
  rescaleMode?: string;
  @ApiPropertyOptional({
    enum: RESUME_MODES,
    default: 'last-state',
    description: 'With desiredState RUNNING: last-state restores what the deployment kept when it stopped (its suspend savepoint, else its latest checkpoint); stateless starts without state (the kept savepoint stays listed)',
  })
  resumeMode?: string;
  @ApiPropertyOptional({
    enum: PARTITIONER_MODES,
    description: 'What the dynamic partitioner may do from now on (alone, it changes nothing else: no restart, no reconcile)',
  })
  partitionerMode?: string;
  @ApiPropertyOptional({
    enum: AUTOSCALER_MODES,
    description: 'What the autoscaler may do from now on (alone, it changes nothing else: no restart, no reconcile)',
  })
  autoscalerMode?: string;
}

export class UpgradeDeploymentRequestDto {
  @ApiPropertyOptional({ description: 'Another version of the same bundle by name and version (or give bundleId)' })
  bundle?: { name: string; version: string };
  @ApiPropertyOptional() bundleId?: string;
  @ApiProperty({
    enum: UPGRADE_MODES,
    description:
      'last-state restores the latest checkpoint (or the state kept at suspend); savepoint starts from a requested savepoint restore, else the savepoint kept at suspend (or without state); stateless starts without state. The transition reason says which',
  })
  mode!: string;
  @ApiPropertyOptional({ description: 'Parallelism for the new version (default: keep the current one)' }) parallelism?: Partial<ParallelismDto>;
}

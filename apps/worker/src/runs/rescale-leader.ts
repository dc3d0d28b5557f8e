/**
 * Process 0's part of a live rescale (protocol: rescale-run). In the checkpoint leader's order: count the joiners in
 * (they started owning nothing), deal the sources' partitions round-robin over their new subtasks (one move per
 * source: a partition carries no state, so each pauses only for its hand-over), move key groups toward even shares in
 * small steps, each a live move between two checkpoints (so only the moving key groups pause, a few at a time, and
 * checkpoints go on between steps), and,
 * scaling in, take one more checkpoint with the retirees (their output commits) before leaving them out. The joiners
 * and retirees are the control plane's to start and stop.
 */
import type { PlannedMove, RunningJob, StageShape } from '@weir/engine';
import type { RescaleProgress, RescaleReport } from '@weir/protocol';
import type { CheckpointLeader } from '../checkpoints/checkpoint-leader';
import type { MoveLeader } from './key-group-mover';
import type { PartitionMoveLeader } from './partition-mover';
import { ownersAfter, planRescale, type RescalePlan, type RescaleRequest } from './rescale-plan';

/** Key groups per step: each step pauses these (and only these), each for its own hand-over; checkpoints run between steps. */
export const RESCALE_STEP_KEY_GROUPS = 8;
/** How long the joiners have to start (bundle download, state folder, Kafka) and say they are ready. */
export const JOIN_TIMEOUT_MS = 120_000;

export interface RescaleCommand extends RescaleRequest {
  readonly rescaleId: string;
  /** The run's parallelism map (operator id → subtasks) as its start command said: the report's starting point. */
  readonly runParallelism: Readonly<Record<string, number>>;
}

export interface PlannedRescale {
  readonly stages: readonly StageShape[];
  /** Per keyed stage, its owners when planned. */
  readonly owners: ReadonlyMap<string, readonly number[]>;
  readonly plan: RescalePlan;
}

export class RescaleLeader {
  constructor(
    private readonly job: RunningJob,
    private readonly leader: CheckpointLeader,
    private readonly moves: MoveLeader,
    private readonly partitionMoves: PartitionMoveLeader,
    private readonly moveTimeoutMs: number,
  ) {}

  /** Throws RescaleRefusedError, before anything changed. */
  plan(command: RescaleCommand): PlannedRescale {
    const stages = this.job.shape();
    // Process 0's tables are current for what it leads: every move of the run goes through it.
    const owners = new Map(stages.filter((s) => s.kind === 'keyed').map((s) => [s.id, this.job.routingTable(s.id).toJSON().owners]));
    return { stages, owners, plan: planRescale(stages, (id) => owners.get(id)!, command) };
  }

  /** Carries out a plan of plan(command); a failure on the way leaves the run to be restored. */
  async lead(command: RescaleCommand, { stages, owners, plan }: PlannedRescale, progress: (p: RescaleProgress) => void, started = Date.now()): Promise<RescaleReport> {
    const total = [...plan.moves.values()].reduce((n, m) => n + m.length, 0);
    progress({ moved: 0, total });
    const sizes = Object.fromEntries(plan.parallelism);
    if (command.toProcesses > command.fromProcesses) await this.leader.grow(command.toProcesses, sizes, JOIN_TIMEOUT_MS);
    // Sources first: growing, the joiners' source channels then carry event time before their keyed subtasks own
    // anything; shrinking, the retirees' sources are empty before the checkpoint that takes their last parts.
    for (const [sourceId, planned] of plan.partitionMoves) {
      await this.leader.between(() => this.partitionMoves.lead(`${command.rescaleId}.${sourceId}`, sourceId, planned, this.moveTimeoutMs));
    }
    const moved: RescaleReport['moved'] = [];
    for (const [operatorId, planned] of plan.moves) {
      for (let i = 0; i < planned.length; i += RESCALE_STEP_KEY_GROUPS) {
        const step: PlannedMove[] = planned.slice(i, i + RESCALE_STEP_KEY_GROUPS);
        const moveId = `${command.rescaleId}.${operatorId}.${i / RESCALE_STEP_KEY_GROUPS}`;
        const report = await this.leader.between(() => this.moves.lead(moveId, operatorId, step, this.moveTimeoutMs));
        for (const m of report.moved) moved.push({ operatorId, ...m });
        progress({ moved: moved.length, total });
      }
    }
    if (command.toProcesses < command.fromProcesses) await this.leader.shrink(command.toProcesses, sizes);

    const parallelism: Record<string, number> = { ...command.runParallelism };
    const routing: Record<string, number[]> = {};
    for (const stage of stages) {
      const now = plan.parallelism.get(stage.id);
      if (now !== undefined) for (const id of stage.operatorIds) parallelism[id] = now;
      if (stage.kind === 'keyed') routing[stage.id] = ownersAfter(owners.get(stage.id)!, plan.moves.get(stage.id) ?? []);
    }
    return { rescaleId: command.rescaleId, processes: command.toProcesses, parallelism, routing, moved, durationMs: Date.now() - started };
  }
}

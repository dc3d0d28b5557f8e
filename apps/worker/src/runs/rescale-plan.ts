/**
 * What a live rescale of a run will do, decided by process 0 from the job as planned here: the key groups each keyed
 * operator moves so that its new subtasks own even shares (evenShareMoves), the partitions each source moves so that
 * they are dealt round-robin over its new subtasks, and the run's parallelism afterwards.
 * What live moves cannot do is refused with the reason (the control plane then rescales by restart).
 */
import { evenShareMoves, type PlannedMove, type StageShape } from '@weir/engine';
import type { MovedPartition } from './run-control';

export class RescaleRefusedError extends Error {
  override readonly name = 'RescaleRefusedError';
}

export interface RescaleRequest {
  /** Processes of the run now, and once rescaled. */
  readonly fromProcesses: number;
  readonly toProcesses: number;
  /**
   * Subtasks per operator wanted (stage root id → count); operators not named keep theirs, and so do sources that do
   * not rescale live (StageShape.partitions); a Kafka source runs at most one subtask per partition.
   */
  readonly parallelism: Readonly<Record<string, number>>;
}

export interface RescalePlan {
  /** Per keyed stage that changes: the moves, in the order they are to be made. */
  readonly moves: ReadonlyMap<string, readonly PlannedMove[]>;
  /** Per source that changes: its partitions that change subtask (dealt round-robin before and after). */
  readonly partitionMoves: ReadonlyMap<string, readonly MovedPartition[]>;
  /** Per stage that changes: its subtask count afterwards. */
  readonly parallelism: ReadonlyMap<string, number>;
}

/**
 * Process i of a run runs subtask i of every stage, so a keyed stage that changes must span every process before and
 * after (its new subtasks run in the joiners, its retiring ones in the retirees), and a source must fit in the
 * processes there are. A keyed stage that changes may feed another through a keyBy (the receivers align over as many
 * channels as its barriers say it has), not through a broadcast; a source changes where all it feeds is keyBy edges.
 */
/** Why an event-time window's key groups do not move between processes (a live move or rescale is refused). */
export function windowsStayPut(operatorId: string): string {
  return `"${operatorId}" is an event-time window: its key groups do not move live between processes yet (a moved key group's records behind the adopter's event time would be dropped as late)`;
}

export function planRescale(stages: readonly StageShape[], ownersOf: (stageId: string) => readonly number[], request: RescaleRequest): RescalePlan {
  const { fromProcesses, toProcesses } = request;
  if (fromProcesses < 2) {
    throw new RescaleRefusedError('the run is in one process (its keyed edges go through memory, not the Kafka exchange): it rescales by restart');
  }
  const known = new Set(stages.map((s) => s.id));
  for (const id of Object.keys(request.parallelism)) {
    if (!known.has(id) && !stages.some((s) => s.operatorIds.includes(id))) throw new RescaleRefusedError(`the job has no operator "${id}"`);
  }
  const moves = new Map<string, PlannedMove[]>();
  const partitionMoves = new Map<string, MovedPartition[]>();
  const parallelism = new Map<string, number>();
  for (const stage of stages) {
    if (stage.kind !== 'source') continue;
    const wanted = stage.partitions === undefined ? stage.parallelism : Math.min(request.parallelism[stage.id] ?? stage.parallelism, stage.partitions);
    if (wanted > toProcesses) {
      throw new RescaleRefusedError(
        stage.partitions === undefined
          ? `source "${stage.id}" runs ${stage.parallelism} subtasks, one in each of processes 0-${stage.parallelism - 1}, and keeps them in a live rescale (it feeds a sink or a broadcast, or is no Kafka source), so the run cannot shrink to ${toProcesses} processes`
          : `source "${stage.id}" would run ${wanted} subtasks, one per process, and the run would have ${toProcesses} processes`,
      );
    }
    if (wanted === stage.parallelism) continue;
    partitionMoves.set(stage.id, partitionMovesOf(stage.partitions!, stage.parallelism, wanted));
    parallelism.set(stage.id, wanted);
  }
  for (const stage of stages) {
    if (stage.kind !== 'keyed') continue;
    const wanted = request.parallelism[stage.id] ?? stage.parallelism;
    if (wanted === stage.parallelism) continue;
    if (stage.parallelism !== fromProcesses || wanted !== toProcesses) {
      throw new RescaleRefusedError(
        `"${stage.id}" would go from ${stage.parallelism} to ${wanted} subtasks while the run goes from ${fromProcesses} to ${toProcesses} processes; live, a keyed operator changes only with the run's process count (one subtask per process)`,
      );
    }
    if (stage.windows) throw new RescaleRefusedError(windowsStayPut(stage.id));
    if (stage.broadcastFeeds.length > 0) {
      throw new RescaleRefusedError(
        `"${stage.id}" broadcasts to ${stage.broadcastFeeds.map((f) => `"${f}"`).join(', ')}: a broadcast input's channels do not change while the run runs`,
      );
    }
    const owners = ownersOf(stage.id);
    if (wanted > owners.length) throw new RescaleRefusedError(`"${stage.id}" has ${owners.length} key groups: it cannot run ${wanted} subtasks`);
    moves.set(stage.id, evenShareMoves(owners, wanted));
    parallelism.set(stage.id, wanted);
  }
  if (parallelism.size === 0 && fromProcesses !== toProcesses) {
    throw new RescaleRefusedError(`no keyed operator changes its parallelism, so the run has no use for ${toProcesses} processes`);
  }
  return { moves, partitionMoves, parallelism };
}

/** The partitions of a source going from `from` to `to` subtasks that change subtask (round-robin before and after). */
export function partitionMovesOf(partitions: number, from: number, to: number): MovedPartition[] {
  const out: MovedPartition[] = [];
  for (let partition = 0; partition < partitions; partition++) {
    if (partition % from !== partition % to) out.push({ partition, fromSubtask: partition % from, toSubtask: partition % to });
  }
  return out;
}

/** Per keyed stage, the owners once the plan's moves are made. */
export function ownersAfter(owners: readonly number[], moves: readonly PlannedMove[]): number[] {
  const out = [...owners];
  for (const m of moves) out[m.keyGroup] = m.toSubtask;
  return out;
}

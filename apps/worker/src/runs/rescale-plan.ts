/**
 * What a live rescale of a run will do, decided by process 0 from the job as planned here: the key groups each keyed
 * operator moves so that its new subtasks own even shares (evenShareMoves), and the run's parallelism afterwards.
 * What live moves cannot do is refused with the reason (the control plane then rescales by restart).
 */
import { evenShareMoves, type PlannedMove, type StageShape } from '@weir/engine';

export class RescaleRefusedError extends Error {
  override readonly name = 'RescaleRefusedError';
}

export interface RescaleRequest {
  /** Processes of the run now, and once rescaled. */
  readonly fromProcesses: number;
  readonly toProcesses: number;
  /** Subtasks per keyed operator wanted (stage root id → count); operators not named, and sources, keep theirs. */
  readonly parallelism: Readonly<Record<string, number>>;
}

export interface RescalePlan {
  /** Per keyed stage that changes: the moves, in the order they are to be made. */
  readonly moves: ReadonlyMap<string, readonly PlannedMove[]>;
  /** Per keyed stage that changes: its subtask count afterwards. */
  readonly parallelism: ReadonlyMap<string, number>;
}

/**
 * Process i of a run runs subtask i of every stage, so a stage that changes must span every process before and after
 * (its new subtasks run in the joiners, its retiring ones in the retirees); a source must run in processes that stay
 * (sources keep their parallelism). A keyed stage that changes may feed another through a keyBy (the receivers align
 * over as many channels as its barriers say it has), not through a broadcast.
 */
export function planRescale(stages: readonly StageShape[], ownersOf: (stageId: string) => readonly number[], request: RescaleRequest): RescalePlan {
  const { fromProcesses, toProcesses } = request;
  if (fromProcesses < 2) {
    throw new RescaleRefusedError('the run is in one process (its keyed edges go through memory, not the Kafka exchange): it rescales by restart');
  }
  const known = new Set(stages.map((s) => s.id));
  for (const id of Object.keys(request.parallelism)) {
    if (!known.has(id) && !stages.some((s) => s.operatorIds.includes(id))) throw new RescaleRefusedError(`the job has no operator "${id}"`);
  }
  for (const stage of stages) {
    if (stage.kind === 'source' && stage.parallelism > toProcesses) {
      throw new RescaleRefusedError(
        `source "${stage.id}" runs ${stage.parallelism} subtasks, one in each of processes 0-${stage.parallelism - 1}; a live rescale keeps sources as they are, so the run cannot shrink to ${toProcesses} processes`,
      );
    }
  }
  const moves = new Map<string, PlannedMove[]>();
  const parallelism = new Map<string, number>();
  for (const stage of stages) {
    if (stage.kind !== 'keyed') continue;
    const wanted = request.parallelism[stage.id] ?? stage.parallelism;
    if (wanted === stage.parallelism) continue;
    if (stage.parallelism !== fromProcesses || wanted !== toProcesses) {
      throw new RescaleRefusedError(
        `"${stage.id}" would go from ${stage.parallelism} to ${wanted} subtasks while the run goes from ${fromProcesses} to ${toProcesses} processes; live, a keyed operator changes only with the run's process count (one subtask per process)`,
      );
    }
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
  return { moves, parallelism };
}

/** Per keyed stage, the owners once the plan's moves are made. */
export function ownersAfter(owners: readonly number[], moves: readonly PlannedMove[]): number[] {
  const out = [...owners];
  for (const m of moves) out[m.keyGroup] = m.toSubtask;
  return out;
}

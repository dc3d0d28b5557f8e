import { type CheckpointSnapshot, JobRunError } from './running-job';
import { present, type StageRuntime } from './stage-runtime';
import type { SubtaskSnapshot } from './subtask';

/**
 * Starts aligned checkpoints at the sources and collects every local subtask's part of the cut. One checkpoint at a
 * time; a subtask that has finished takes no further checkpoints, so neither does the job.
 */
export class CheckpointCoordinator {
  private pending: {
    readonly checkpointId: number;
    readonly expected: number;
    readonly parts: SubtaskSnapshot[];
    readonly resolve: (snapshot: CheckpointSnapshot) => void;
  } | null = null;

  trigger(checkpointId: number, stages: readonly StageRuntime[]): Promise<CheckpointSnapshot> {
    if (this.pending) return Promise.reject(new JobRunError(`checkpoint ${this.pending.checkpointId} is still running`));
    const subtasks = stages.flatMap((rt) => present(rt.subtasks));
    if (subtasks.some((s) => s.hasFinished)) {
      return Promise.reject(new JobRunError('part of the job has finished; it takes no further checkpoints'));
    }
    const done = new Promise<CheckpointSnapshot>((resolve) => {
      this.pending = { checkpointId, expected: subtasks.length, parts: [], resolve };
    });
    for (const rt of stages) {
      for (const pump of present(rt.pumps)) pump.injectBarrier(checkpointId);
      for (const input of present(rt.memoryInputs)) input.barrier(checkpointId, {});
    }
    return done;
  }

  onSnapshot(checkpointId: number, part: SubtaskSnapshot): void {
    const pending = this.pending;
    if (!pending || pending.checkpointId !== checkpointId) return;
    pending.parts.push(part);
    if (pending.parts.length === pending.expected) {
      this.pending = null;
      pending.resolve({ checkpointId, subtasks: pending.parts });
    }
  }
}

import { type CheckpointSnapshot, JobRunError } from './running-job';
import { present, type StageRuntime } from './stage-runtime';
import type { SubtaskSnapshot } from './subtask';

/**
 * Starts aligned checkpoints at the sources and collects every local subtask's part of the cut. One checkpoint at a
 * time: a new one supersedes one still collecting (its caller gave it up, e.g. on a checkpoint timeout), whose
 * promise then rejects and whose late parts are ignored. A subtask that has finished takes no further checkpoints,
 * so neither does the job.
 */
export class CheckpointCoordinator {
  private pending: {
    readonly checkpointId: number;
    readonly expected: number;
    readonly parts: SubtaskSnapshot[];
    readonly resolve: (snapshot: CheckpointSnapshot) => void;
    readonly reject: (error: Error) => void;
  } | null = null;

  /** A cut is being collected (live key-group moves wait for none: a moved key group must be in exactly one part). */
  get collecting(): boolean {
    return this.pending !== null;
  }

  trigger(checkpointId: number, stages: readonly StageRuntime[]): Promise<CheckpointSnapshot> {
    const subtasks = stages.flatMap((rt) => present(rt.subtasks));
    if (subtasks.some((s) => s.hasFinished)) {
      return Promise.reject(new JobRunError('part of the job has finished; it takes no further checkpoints'));
    }
    if (this.pending) {
      // Barriers are ordered within every channel, so the old cut completes (and is ignored) before the new one.
      if (checkpointId <= this.pending.checkpointId) {
        return Promise.reject(new JobRunError(`checkpoint ${checkpointId} is not newer than checkpoint ${this.pending.checkpointId}, still running`));
      }
      this.pending.reject(new JobRunError(`checkpoint ${this.pending.checkpointId} was superseded by checkpoint ${checkpointId}`));
    }
    const done = new Promise<CheckpointSnapshot>((resolve, reject) => {
      this.pending = { checkpointId, expected: subtasks.length, parts: [], resolve, reject };
    });
    for (const rt of stages) {
      // Barriers enter at the sources only; keyed stages' exchange readers hand on those of upstream subtasks (one
      // reading no partition passes it at once: kafka-exchange-reader.ts).
      if (rt.plan.root.kind !== 'source') {
        for (const pump of present(rt.pumps)) pump.onCheckpointTrigger?.(checkpointId);
        continue;
      }
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

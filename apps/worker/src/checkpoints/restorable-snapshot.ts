import type { CheckpointSnapshot, JobDefinition } from '@weir/engine';

export class NonRestoredStateError extends Error {
  override readonly name = 'NonRestoredStateError';
}

/**
 * The part of a snapshot this job can take. State of operators the bundle no longer has is refused, naming them,
 * unless the caller allowed dropping it.
 */
export function restorableSnapshot(
  snapshot: CheckpointSnapshot,
  definition: JobDefinition,
  allowNonRestoredState: boolean,
  /** False for another job's snapshot: its exchange positions are offsets in that job's topics, meaningless here. */
  sameJob = true,
): CheckpointSnapshot {
  const ids = new Set(definition.nodes.map((n) => n.id));
  const unknown = [...new Set(snapshot.subtasks.map((s) => s.stageId))].filter((id) => !ids.has(id));
  if (unknown.length > 0 && !allowNonRestoredState) {
    throw new NonRestoredStateError(
      `checkpoint ${snapshot.checkpointId} holds state of operators this bundle does not have: ${unknown.join(', ')} ` +
        '(restore with allowNonRestoredState to drop it)',
    );
  }
  const kept = snapshot.subtasks.filter((s) => ids.has(s.stageId));
  return {
    checkpointId: snapshot.checkpointId,
    subtasks: sameJob ? kept : kept.map(({ exchangePositions: _positions, ...rest }) => rest),
  };
}

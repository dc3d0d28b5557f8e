import type { CheckpointManifest } from '@weir/checkpoint';

/** Where a decision's state bytes per key group came from, in words (kept with its inputs). */
export interface StateBytesEstimate {
  /** key group → bytes; its length is the key-group count. */
  readonly bytes: readonly number[];
  readonly source: string;
}

/**
 * Bytes of state per key group of one operator from a checkpoint manifest, as far as a manifest tells: it names each
 * subtask's files and the key groups they cover, not the bytes of each key group, so each subtask's bytes (state files
 * and metadata such as timers) are spread evenly over its key groups. Good enough for the move budget (a decision moves
 * at most maxMoveBytes of estimated state); it cannot tell a heavy key group from a light one of the same subtask.
 * Null when the manifest has no keyed state of the operator, or another key-group count.
 */
export function stateBytesFromManifest(manifest: CheckpointManifest, operatorId: string, maxParallelism: number): StateBytesEstimate | null {
  if (manifest.maxParallelism !== maxParallelism) return null;
  const operator = manifest.operators.find((o) => o.operatorId === operatorId);
  if (!operator) return null;
  const bytes = new Array<number>(maxParallelism).fill(0);
  let covered = 0;
  for (const subtask of operator.subtasks) {
    const ranges = (subtask.keyGroups ?? []).filter((r) => r.start <= r.end && r.end < maxParallelism);
    const keyGroups = ranges.reduce((n, r) => n + r.end - r.start + 1, 0);
    if (keyGroups === 0) continue;
    const total = [...subtask.files, ...subtask.metadata].reduce((n, f) => n + f.size, 0);
    for (const r of ranges) for (let kg = r.start; kg <= r.end; kg++) bytes[kg] = total / keyGroups;
    covered += keyGroups;
  }
  if (covered === 0) return null;
  return { bytes, source: `checkpoint ${manifest.checkpointId}: each subtask's state spread evenly over its key groups` };
}

/** What a decision says when no checkpoint tells the sizes: every move counts as 0 bytes against the budget. */
export const UNKNOWN_STATE_BYTES = 'unknown: no checkpoint of the operator yet, so every move counts as 0 bytes';

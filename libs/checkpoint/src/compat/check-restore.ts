import type { CheckpointManifest } from '../manifest/manifest';

export interface RestoreTarget {
  /** Every operator id of the job (bundle version) that would restore. */
  readonly operatorIds: readonly string[];
  readonly maxParallelism: number;
}

export interface UnreadableState {
  readonly operatorId: string;
  readonly reason: string;
}

export interface RestoreCheck {
  /** True when every piece of state in the checkpoint would be restored. */
  readonly ok: boolean;
  /** Operators with state in the checkpoint that the new job does not have: their state would be dropped. */
  readonly dropped: readonly string[];
  /** Operators the new job has whose state in the checkpoint it cannot read, with the reason. */
  readonly unreadable: readonly UnreadableState[];
}

/**
 * "Can this job restore this savepoint?", answered from the manifest alone, before anything stops. State is
 * matched by operator id (ids are stable across bundle versions; renaming one drops its state). Keyed state is
 * stored per key group, so it restores at any parallelism but only with the same max parallelism (the number of
 * key groups: keys would hash to other key groups). Restoring with `dropped` state needs the caller's explicit
 * consent; `unreadable` state cannot be restored at all.
 */
export function checkRestore(manifest: CheckpointManifest, target: RestoreTarget): RestoreCheck {
  const wanted = new Set(target.operatorIds);
  const dropped: string[] = [];
  const unreadable: UnreadableState[] = [];
  for (const operator of manifest.operators) {
    if (!hasState(operator.subtasks)) continue;
    if (!wanted.has(operator.operatorId)) {
      dropped.push(operator.operatorId);
      continue;
    }
    const keyed = operator.subtasks.filter((s) => s.keyGroups !== null);
    if (keyed.length === 0) continue;
    if (manifest.maxParallelism !== target.maxParallelism) {
      unreadable.push({
        operatorId: operator.operatorId,
        reason:
          `max parallelism changed from ${manifest.maxParallelism} to ${target.maxParallelism}: keyed state is ` +
          `stored in ${manifest.maxParallelism} key groups and keys would hash to other ones`,
      });
      continue;
    }
    const missing = uncovered(keyed.flatMap((s) => s.keyGroups ?? []), manifest.maxParallelism);
    if (missing.length > 0) {
      unreadable.push({
        operatorId: operator.operatorId,
        reason: `the checkpoint lacks key groups ${missing.map(({ start, end }) => (start === end ? `${start}` : `${start}..${end}`)).join(', ')}`,
      });
    }
  }
  return { ok: dropped.length === 0 && unreadable.length === 0, dropped, unreadable };
}

function hasState(subtasks: CheckpointManifest['operators'][number]['subtasks']): boolean {
  return subtasks.some((s) => s.keyGroups !== null || s.files.length > 0 || s.metadata.length > 0);
}

/** The key groups of 0..count-1 no range covers, as ranges. */
function uncovered(ranges: readonly { start: number; end: number }[], count: number): { start: number; end: number }[] {
  const sorted = [...ranges].sort((a, b) => a.start - b.start);
  const gaps: { start: number; end: number }[] = [];
  let next = 0;
  for (const { start, end } of sorted) {
    if (start > next) gaps.push({ start: next, end: Math.min(start, count) - 1 });
    next = Math.max(next, end + 1);
  }
  if (next < count) gaps.push({ start: next, end: count - 1 });
  return gaps;
}

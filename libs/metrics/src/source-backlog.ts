import type { SubtaskMetricsSnapshot } from './contract';

/**
 * A snapshot's source backlog, null where it has none. Snapshots stored or sent before the field existed lack it
 * (a worker not yet upgraded, a Redis entry written by it): they read as "no backlog reported", never as 0.
 */
export function sourceBacklogOf(snapshot: SubtaskMetricsSnapshot): number | null {
  const backlog = (snapshot as { readonly sourceBacklog?: unknown }).sourceBacklog;
  return typeof backlog === 'number' && Number.isFinite(backlog) ? backlog : null;
}

/** The sum of the snapshots' backlogs; null when none of them reports one. */
export function totalSourceBacklog(snapshots: readonly SubtaskMetricsSnapshot[]): number | null {
  let total: number | null = null;
  for (const snapshot of snapshots) {
    const backlog = sourceBacklogOf(snapshot);
    if (backlog !== null) total = (total ?? 0) + backlog;
  }
  return total;
}

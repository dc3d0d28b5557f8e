import type { DeploymentRun } from '../deployments/deployment';

/**
 * Savepoints the reconciler takes itself: when a run stops toward SUSPENDED, and when a savepoint upgrade stops the
 * old version. Ids are deterministic per run, so a resent stop takes the same one.
 */
export const suspendSavepointId = (run: DeploymentRun): string => `suspend-run-${run.runNo}`;
export const upgradeSavepointId = (run: DeploymentRun): string => `upgrade-run-${run.runNo}`;

/** How many of them a deployment keeps (the Flink operator caps its savepoint history the same way). */
export const LIFECYCLE_SAVEPOINTS_KEPT = 3;

const LIFECYCLE_ID = /^(?:suspend|upgrade)-run-(\d+)$/;

/**
 * The reconciler's own savepoints beyond the newest `keep` (by run), oldest last; never a tenant's savepoint, never
 * one in `protect` (what the next run restores, what the current run restored).
 */
export function lifecycleSavepointsToDispose(ids: readonly string[], protect: ReadonlySet<string>, keep = LIFECYCLE_SAVEPOINTS_KEPT): string[] {
  return ids
    .flatMap((id) => {
      const m = LIFECYCLE_ID.exec(id);
      return m ? [{ id, runNo: Number(m[1]) }] : [];
    })
    .sort((a, b) => b.runNo - a.runNo)
    .slice(keep)
    .map((s) => s.id)
    .filter((id) => !protect.has(id));
}

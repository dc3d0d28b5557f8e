import { type CheckpointManifest, type CheckpointStore, type JobScope, NoUsableCheckpointError, type RestoreAttempt } from '@weir/checkpoint';
import type { DecodedCheckpoint } from './snapshot-codec';
import { chainSeedsOf, type ChainSeed } from './key-group-chains';
import { fromDownloaded } from './snapshot-codec';

/** Where a job starts from: `snapshotId: "latest"` is the newest usable checkpoint; otherwise `location` is a manifest key. */
export interface RestoreFrom {
  readonly snapshotId: string;
  readonly location: string;
}

export const LATEST_CHECKPOINT = 'latest';

export interface RestorePoint {
  readonly decoded: DecodedCheckpoint;
  readonly manifest: CheckpointManifest;
  readonly checkpointId: number;
  readonly manifestKey: string;
  /** Newer checkpoints that could not be used, with the reason (truncated or missing file, bad manifest). */
  readonly skipped: readonly RestoreAttempt[];
  /** The keyed chains a recovery continues ("latest" only: a savepoint or another job's checkpoint starts afresh). */
  readonly chains: readonly ChainSeed[];
}

/**
 * Downloads and verifies the restore point. "latest" with no checkpoint at all is a fresh start (null): nothing was
 * committed by an exactly-once sink before the first checkpoint. Every checkpoint unusable is an error: starting
 * fresh would repeat committed output.
 */
export async function loadRestorePoint(
  store: CheckpointStore,
  scope: JobScope,
  from: RestoreFrom,
  operatorIds: readonly string[],
  localDir: string,
): Promise<RestorePoint | null> {
  const selections = operatorIds.map((operatorId) => ({ operatorId }));
  if (from.snapshotId === LATEST_CHECKPOINT) {
    try {
      const restored = await store.restoreLatestUsable(scope, selections, localDir);
      const m = restored.checkpoint.manifest;
      return {
        decoded: fromDownloaded(restored.checkpoint),
        manifest: m,
        checkpointId: m.checkpointId,
        manifestKey: keyOf(scope, m.checkpointId),
        skipped: restored.skipped,
        // After a fallback the next write's base is the newer, unusable checkpoint, which lacks these chains' links.
        chains: restored.skipped.length === 0 ? chainSeedsOf(restored.checkpoint) : [],
      };
    } catch (err) {
      if (err instanceof NoUsableCheckpointError && err.attempts.length === 0) return null;
      throw err;
    }
  }
  const checkpoint = await store.read(from.location);
  // Every operator of the snapshot: state this bundle cannot take is then refused by name, not silently left out.
  const all = checkpoint.manifest.operators.map((o) => ({ operatorId: o.operatorId }));
  const downloaded = await store.download(checkpoint, all, localDir);
  return { decoded: fromDownloaded(downloaded), manifest: checkpoint.manifest, checkpointId: checkpoint.manifest.checkpointId, manifestKey: checkpoint.key, skipped: [], chains: [] };
}

function keyOf(scope: JobScope, checkpointId: number): string {
  return `tenants/${scope.tenantId}/jobs/${scope.jobId}/checkpoints/${String(checkpointId).padStart(20, '0')}/manifest.json`;
}

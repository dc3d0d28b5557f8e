/**
 * What a run restores from, as carried by run-subtasks' restoreFrom. The job host resolves it with libs/checkpoint:
 * "latest" is the job's newest usable checkpoint under the job's prefix (checkpoints are read from S3, where the
 * manifest written last is the proof of completion, so no table can disagree with it); a savepoint is named by
 * its manifest key.
 */
export interface RestoreFrom {
  readonly snapshotId: string;
  readonly location: string;
}

export const LATEST_CHECKPOINT = 'latest';

export function jobPrefix(tenantId: string, jobId: string): string {
  return `tenants/${tenantId}/jobs/${jobId}/`;
}

export function latestCheckpointOf(tenantId: string, jobId: string): RestoreFrom {
  return { snapshotId: LATEST_CHECKPOINT, location: jobPrefix(tenantId, jobId) };
}

export function savepointManifestKey(tenantId: string, jobId: string, savepointId: string): string {
  return `${jobPrefix(tenantId, jobId)}savepoints/${savepointId}/manifest.json`;
}

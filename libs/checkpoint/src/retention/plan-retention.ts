import type { PendingMarker } from '../storage/pending-marker';

export interface RetentionPolicy {
  /** Completed checkpoints to keep (≥ 1), besides every savepoint. */
  readonly keep: number;
  /** Allowance for clock skew between writers, this process and S3 (ms). */
  readonly safetyMarginMs: number;
  /** A pending marker older than this belongs to a writer that died: ignored and removed (ms). */
  readonly abandonAfterMs: number;
}

export interface RetentionInput {
  readonly now: number;
  /** When the pending markers were listed: listed BEFORE the manifests (see planRetention). */
  readonly markersListedAt: number;
  readonly pending: readonly { readonly key: string; readonly lastModified: number; readonly marker: PendingMarker }[];
  /** `files` is null when the manifest could not be read. */
  readonly checkpoints: readonly {
    readonly checkpointId: number;
    readonly key: string;
    readonly lastModified: number;
    readonly files: ReadonlySet<string> | null;
  }[];
  readonly savepoints: readonly { readonly savepointId: string; readonly files: ReadonlySet<string> | null }[];
  readonly shared: readonly { readonly sha256: string; readonly key: string; readonly size: number; readonly lastModified: number }[];
}

export interface RetentionPlan {
  readonly keptCheckpoints: number[];
  /** Manifests to delete first: once gone, nobody restores from them. */
  readonly dropManifests: { checkpointId: number; key: string }[];
  /** Then the shared files no one references any more. */
  readonly deleteFiles: { key: string; size: number }[];
  readonly deleteMarkers: string[];
  readonly keptFiles: number;
  readonly notes: string[];
}

/**
 * Decides what retention deletes, as a pure function of what was listed. Safety against writes running
 * concurrently (see pending-marker.ts), given that markers are listed before the manifests and shared files:
 * - a checkpoint is dropped only if `keep` newer ones had settled (completed a margin before the markers were
 *   listed): a writer that chose its base after that listing chose one of those or a newer one;
 * - the base of every live pending write is kept, and while a writer is still choosing, nothing is dropped;
 * - a shared file is deleted only if no kept checkpoint or savepoint names it and it is older than both this run
 *   and the oldest live pending write (minus the margin): it may be an upload not yet named in a manifest;
 * - if a manifest that is kept cannot be read, no file is deleted (its files are unknown).
 */
export function planRetention(input: RetentionInput, policy: RetentionPolicy): RetentionPlan {
  const notes: string[] = [];
  const keep = Math.max(1, Math.floor(policy.keep));
  const live = input.pending.filter((p) => p.lastModified >= input.now - policy.abandonAfterMs);
  const deleteMarkers = input.pending.filter((p) => !live.includes(p)).map((p) => p.key);

  const newestFirst = [...input.checkpoints].sort((a, b) => b.checkpointId - a.checkpointId);
  const kept = new Set<number>();
  const settledBefore = input.markersListedAt - policy.safetyMarginMs;
  let settledKept = 0;
  for (const checkpoint of newestFirst) {
    if (checkpoint.lastModified >= settledBefore) kept.add(checkpoint.checkpointId);
    else if (settledKept < keep) {
      kept.add(checkpoint.checkpointId);
      settledKept++;
    }
  }
  for (const { marker } of live) if (typeof marker.base === 'number') kept.add(marker.base);
  if (live.some(({ marker }) => marker.base === 'choosing')) {
    notes.push('a checkpoint is choosing its base: no checkpoint dropped this round');
    for (const checkpoint of newestFirst) kept.add(checkpoint.checkpointId);
  }

  const referenced = new Set<string>();
  let unreadable = false;
  const reference = (files: ReadonlySet<string> | null, what: string) => {
    if (files === null) {
      unreadable = true;
      notes.push(`${what}'s manifest cannot be read: no file deleted this round`);
    } else for (const sha of files) referenced.add(sha);
  };
  for (const checkpoint of newestFirst) {
    if (kept.has(checkpoint.checkpointId)) reference(checkpoint.files, `checkpoint ${checkpoint.checkpointId}`);
  }
  for (const savepoint of input.savepoints) reference(savepoint.files, `savepoint ${savepoint.savepointId}`);

  const oldestPending = Math.min(input.now, ...live.map(({ marker, lastModified }) => Math.min(marker.startedAt, lastModified)));
  const cutoff = oldestPending - policy.safetyMarginMs;
  const deleteFiles = unreadable
    ? []
    : input.shared
        .filter((file) => !referenced.has(file.sha256) && file.lastModified < cutoff)
        .map(({ key, size }) => ({ key, size }));
  return {
    keptCheckpoints: newestFirst.filter((c) => kept.has(c.checkpointId)).map((c) => c.checkpointId),
    dropManifests: newestFirst
      .filter((c) => !kept.has(c.checkpointId))
      .map(({ checkpointId, key }) => ({ checkpointId, key })),
    deleteFiles,
    deleteMarkers,
    keptFiles: input.shared.length - deleteFiles.length,
    notes,
  };
}

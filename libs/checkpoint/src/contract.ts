import type { KeyGroupRange, LocalCheckpoint } from '@weir/state';
import type { CheckpointManifest, ManifestFileRef } from './manifest/manifest';

/** One subtask's contribution to a checkpoint, as the engine hands it over after its barrier. */
export interface CheckpointPartInput {
  readonly operatorId: string;
  readonly subtask: number;
  /**
   * The key groups the subtask's keyed state covers (inclusive ranges; one by default, several after live moves);
   * omit for operators without keyed state.
   */
  readonly keyGroups?: KeyGroupRange | readonly KeyGroupRange[];
  /** The subtask's keyed state as local files (`backend.checkpoint(dir)`); the caller deletes them afterwards. */
  readonly state?: LocalCheckpoint;
  /** Opaque engine blobs (timers, broadcast state, source offsets...), stored as files and handed back on restore. */
  readonly metadata?: Readonly<Record<string, Uint8Array>>;
  /**
   * Metadata blobs an earlier checkpoint stored, referenced again by name, sha256 and size without their bytes (the
   * unchanged links of an incremental chain). Each must be referenced by the base, the latest completed checkpoint
   * (retention protects only that one while a write is in progress); otherwise the write fails with StaleReuseError.
   */
  readonly reusedMetadata?: readonly ManifestFileRef[];
}

export interface WriteCheckpointCommand {
  readonly tenantId: string;
  readonly jobId: string;
  readonly checkpointId: number;
  /** The job's max parallelism (number of key groups): a restore needs the same. */
  readonly maxParallelism: number;
  readonly parts: readonly CheckpointPartInput[];
  /** Job-level engine blobs (routing tables, say). */
  readonly metadata?: Readonly<Record<string, Uint8Array>>;
  /** Writes a savepoint of this id instead of a checkpoint: user-owned, never collected by retain. Idempotent. */
  readonly savepointId?: string;
  /** Gives the write up (CheckpointAbortedError): checked between uploads and, last, before the manifest is written. */
  readonly signal?: AbortSignal;
}

/** A checkpoint or savepoint whose manifest is on S3: it exists, completely. */
export interface CompletedCheckpoint {
  readonly key: string;
  readonly manifest: CheckpointManifest;
}

/** A manifest found by listing, not yet read. */
export type StoredCheckpointRef =
  | { readonly kind: 'checkpoint'; readonly checkpointId: number; readonly key: string; readonly lastModified?: Date }
  | { readonly kind: 'savepoint'; readonly savepointId: string; readonly key: string; readonly lastModified?: Date };

/** Which parts of a checkpoint to download: one operator's subtasks, or whichever cover some key groups. */
export interface DownloadSelection {
  readonly operatorId: string;
  /** Only these subtasks (default: all of the operator's, unless keyGroups narrows them). */
  readonly subtasks?: readonly number[];
  /** Only subtasks whose key groups intersect this range (restoring at another parallelism). */
  readonly keyGroups?: KeyGroupRange;
}

export interface DownloadedPart {
  readonly operatorId: string;
  readonly subtask: number;
  readonly keyGroups: readonly KeyGroupRange[] | null;
  /** Ready for openStateBackendFromCheckpoint; null when the part had no keyed state. */
  readonly state: LocalCheckpoint | null;
  readonly metadata: Readonly<Record<string, Buffer>>;
}

export interface DownloadedCheckpoint {
  readonly manifest: CheckpointManifest;
  readonly parts: readonly DownloadedPart[];
  /** Job-level metadata blobs. */
  readonly metadata: Readonly<Record<string, Buffer>>;
}

export interface RestoreAttempt {
  readonly checkpointId: number;
  readonly reason: string;
}

export interface RestoredCheckpoint {
  readonly checkpoint: DownloadedCheckpoint;
  /** Newer checkpoints that could not be used, newest first, each with its reason (corrupt file, missing file...). */
  readonly skipped: readonly RestoreAttempt[];
}

export interface RetentionReport {
  readonly keptCheckpoints: readonly number[];
  readonly droppedCheckpoints: readonly number[];
  readonly deletedFiles: number;
  readonly deletedBytes: number;
  readonly keptFiles: number;
  /** Why this round deleted less than it might have (a checkpoint choosing its base, an unreadable manifest). */
  readonly notes: readonly string[];
}

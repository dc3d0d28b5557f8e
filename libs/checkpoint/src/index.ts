/**
 * Checkpoint and savepoint storage on S3: incremental (content-addressed, immutable state files are uploaded
 * once), manifests written last, verified downloads with fallback, reference-counted retention, and the
 * savepoint compatibility check. The engine hands over local checkpoints (@weir/state) and opaque metadata.
 */
export type {
  CheckpointPartInput,
  CompletedCheckpoint,
  DownloadedCheckpoint,
  DownloadedPart,
  DownloadSelection,
  RestoreAttempt,
  RestoredCheckpoint,
  RetentionReport,
  StoredCheckpointRef,
  WriteCheckpointCommand,
} from './contract';
export { CheckpointStore, type CheckpointStoreOptions } from './storage/checkpoint-store';
export type { UploadedParts, UploadPartsCommand, WriteManifestCommand } from './storage/write-checkpoint';
export { checkRestore, type RestoreCheck, type RestoreTarget, type UnreadableState } from './compat/check-restore';
export {
  MANIFEST_FORMAT,
  MANIFEST_VERSION,
  parseManifest,
  serializeManifest,
  type CheckpointManifest,
  type ManifestFileRef,
  type ManifestOperator,
  type ManifestSubtask,
} from './manifest/manifest';
export {
  CheckpointAbortedError,
  CheckpointNotFoundError,
  CorruptCheckpointError,
  InvalidCheckpointError,
  ManifestFormatError,
  ManifestVersionError,
  MissingCheckpointFileError,
  NoUsableCheckpointError,
  StaleReuseError,
} from './errors';
export type { JobScope } from './layout';

/** Keyed state for the stream engine: the contract, the backend factory and the errors it can raise. */
export * from './contract';
export { CachedStateRef } from './keys/key-layout';
export {
  createStateBackend,
  DEFAULT_CACHE_ENTRIES,
  type CreateStateBackendOptions,
} from './backend/create-state-backend';
export type {
  CheckpointableStateBackend,
  KeyGroupRange,
  LocalCheckpoint,
  LocalCheckpointFile,
  StateBackendKind,
} from './checkpoint/local-checkpoint';
export { openStateBackendFromCheckpoint, type OpenFromCheckpointOptions } from './checkpoint/open-from-checkpoint';
export { copyKeyGroups, type CopyKeyGroupsResult } from './checkpoint/copy-key-groups';
export { DEFAULT_MATERIALIZE_EVERY, type ChangelogOptions } from './backend/changelog';
export { composeKeyGroupImage, isChangesImage } from './snapshot/key-group-changes';
export {
  InvalidStateRefError,
  StateCheckpointError,
  StateBackendClosedError,
  StateBackendConfigError,
  StateImageError,
  StateValueFormatError,
} from './errors';

/** Keyed state for the stream engine: the contract, the backend factory and the errors it can raise. */
export * from './contract';
export {
  createStateBackend,
  DEFAULT_CACHE_ENTRIES,
  type CreateStateBackendOptions,
} from './backend/create-state-backend';
export {
  InvalidStateRefError,
  StateBackendClosedError,
  StateBackendConfigError,
  StateImageError,
  StateValueFormatError,
} from './errors';

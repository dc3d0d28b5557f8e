import { CachedStateBackend } from './cached-state-backend';
import { Changelog, type ChangelogOptions } from './changelog';
import { StateBackendConfigError } from '../errors';
import type { CheckpointableStateBackend } from '../checkpoint/local-checkpoint';
import type { StateBackendOptions } from '../contract';
import { MemoryStore } from '../store/memory-store';
import { RocksStore } from '../store/rocks-store';

export interface CreateStateBackendOptions extends StateBackendOptions {
  /** `memory`: sorted in-memory store, for tests and small state. `lsm`: RocksDB under `path` (required). */
  readonly kind: 'memory' | 'lsm';
  /** Processing-time clock for TTL cleanup at flush and snapshot; Date.now unless a test pins time. */
  readonly clock?: () => number;
  /**
   * Keep a changelog per key group, so that checkpointKeyGroups hands over changes instead of full images
   * (incremental checkpoints of the job host). Off by default: then checkpoints are full images.
   */
  readonly changelog?: boolean | ChangelogOptions;
}

export const DEFAULT_CACHE_ENTRIES = 100_000;

/**
 * Opens a keyed state backend. The LSM backend creates its directory, or reopens the state already in it. Both
 * kinds can write local checkpoints (`checkpoint(dir)`) beyond the engine's KeyedStateBackend contract.
 */
export async function createStateBackend(options: CreateStateBackendOptions): Promise<CheckpointableStateBackend> {
  const cacheEntries = options.cacheEntries ?? DEFAULT_CACHE_ENTRIES;
  if (!Number.isInteger(cacheEntries) || cacheEntries < 0) {
    throw new StateBackendConfigError(`cacheEntries must be a non-negative integer, got ${cacheEntries}`);
  }
  const clock = options.clock ?? Date.now;
  const changelog = options.changelog ? new Changelog(options.changelog === true ? {} : options.changelog) : null;
  switch (options.kind) {
    case 'memory':
      return new CachedStateBackend(new MemoryStore(), cacheEntries, clock, 'memory', changelog);
    case 'lsm': {
      if (!options.path) throw new StateBackendConfigError('the lsm state backend needs a path');
      return new CachedStateBackend(await RocksStore.open(options.path), cacheEntries, clock, 'lsm', changelog);
    }
    default:
      throw new StateBackendConfigError(`unknown state backend kind ${String((options as { kind: unknown }).kind)}`);
  }
}

import { copyFile, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CachedStateBackend } from '../backend/cached-state-backend';
import { StateBackendConfigError, StateCheckpointError } from '../errors';
import { MAX_KEY_GROUP } from '../keys/key-layout';
import { MemoryStore } from '../store/memory-store';
import { RocksStore } from '../store/rocks-store';
import { copyKeyGroups } from './copy-key-groups';
import type { CheckpointableStateBackend, LocalCheckpoint, StateBackendKind } from './local-checkpoint';
import { isImmutableRocksFile, isRocksCheckpointFile, linkOrCopy } from './rocks-files';
import { readStoreImage, STORE_IMAGE_FILE } from './store-image';

export interface OpenFromCheckpointOptions {
  /** The checkpoint's files (from `backend.checkpoint(dir)`, or downloaded from checkpoint storage). */
  readonly checkpoint: LocalCheckpoint;
  /** The backend to open; the checkpoint's own kind by default. Another kind copies every key group across. */
  readonly kind?: StateBackendKind;
  /** The LSM backend's directory: it must not exist or be empty. */
  readonly path?: string;
  readonly cacheEntries?: number;
  readonly clock?: () => number;
}

const DEFAULT_CACHE_ENTRIES = 100_000;
const RESTORE_BATCH_ENTRIES = 4096;

/**
 * Opens a keyed state backend holding exactly the state of a local checkpoint. An LSM checkpoint becomes the new
 * store's directory (SSTs hard-linked, the small mutable files copied: RocksDB rewrites those), so opening costs
 * no data copy; the checkpoint's files can be deleted afterwards. A memory checkpoint is its image loaded.
 */
export async function openStateBackendFromCheckpoint(options: OpenFromCheckpointOptions): Promise<CheckpointableStateBackend> {
  const { checkpoint } = options;
  const kind = options.kind ?? checkpoint.kind;
  const cacheEntries = options.cacheEntries ?? DEFAULT_CACHE_ENTRIES;
  const clock = options.clock ?? Date.now;
  if (kind === checkpoint.kind) {
    if (kind === 'memory') return new CachedStateBackend(await loadImage(checkpoint), cacheEntries, clock, 'memory');
    const path = requirePath(options.path);
    await prepareEmptyDir(path);
    await placeRocksFiles(checkpoint, path);
    return new CachedStateBackend(await RocksStore.open(path), cacheEntries, clock, 'lsm');
  }
  // Across kinds: open the checkpoint as what it is (an LSM one beside the target directory), then copy it over.
  const sourcePath = checkpoint.kind === 'lsm' ? `${requirePath(options.path ?? checkpoint.dir)}.source` : undefined;
  const source = await openStateBackendFromCheckpoint({ checkpoint, path: sourcePath, cacheEntries: 0, clock });
  try {
    const target =
      kind === 'memory'
        ? new CachedStateBackend(new MemoryStore(), cacheEntries, clock, 'memory')
        : await openEmptyLsm(requirePath(options.path), cacheEntries, clock);
    await copyKeyGroups(source, target, [{ start: 0, end: MAX_KEY_GROUP }]);
    return target;
  } finally {
    await source.close();
    if (sourcePath) await rm(sourcePath, { recursive: true, force: true });
  }
}

async function openEmptyLsm(path: string, cacheEntries: number, clock: () => number): Promise<CachedStateBackend> {
  await prepareEmptyDir(path);
  return new CachedStateBackend(await RocksStore.open(path), cacheEntries, clock, 'lsm');
}

function requirePath(path: string | undefined): string {
  if (!path) throw new StateBackendConfigError('restoring an lsm state backend needs a path');
  return path;
}

async function prepareEmptyDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true });
  if ((await readdir(path)).length > 0) throw new StateCheckpointError(`state directory ${path} is not empty`);
}

async function placeRocksFiles(checkpoint: LocalCheckpoint, path: string): Promise<void> {
  const names = new Set(checkpoint.files.map((file) => file.name));
  if (!names.has('CURRENT')) throw new StateCheckpointError(`lsm checkpoint in ${checkpoint.dir} has no CURRENT file`);
  for (const file of checkpoint.files) {
    if (!isRocksCheckpointFile(file.name)) {
      throw new StateCheckpointError(`lsm checkpoint in ${checkpoint.dir} has an unexpected file ${file.name}`);
    }
    if (isImmutableRocksFile(file.name)) await linkOrCopy(file.path, join(path, file.name));
    else await copyFile(file.path, join(path, file.name));
  }
  const manifest = (await readFile(join(path, 'CURRENT'), 'utf8')).trim();
  if (!names.has(manifest)) {
    throw new StateCheckpointError(`lsm checkpoint in ${checkpoint.dir} lacks ${manifest}, which CURRENT names`);
  }
}

async function loadImage(checkpoint: LocalCheckpoint): Promise<MemoryStore> {
  const file = checkpoint.files.find((f) => f.name === STORE_IMAGE_FILE);
  if (!file) throw new StateCheckpointError(`memory checkpoint in ${checkpoint.dir} has no ${STORE_IMAGE_FILE}`);
  const entries = readStoreImage(await readFile(file.path), file.path);
  const store = new MemoryStore();
  for (let i = 0; i < entries.length; i += RESTORE_BATCH_ENTRIES) {
    await store.writeBatch(
      entries.slice(i, i + RESTORE_BATCH_ENTRIES).map(({ key, value }) => ({ kind: 'put' as const, key, value })),
    );
  }
  return store;
}

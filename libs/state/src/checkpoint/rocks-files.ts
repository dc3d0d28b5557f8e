import { copyFile, link, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { StateCheckpointError } from '../errors';
import type { LocalCheckpointFile } from './local-checkpoint';

/** RocksDB's immutable table files: hard-linked, never copied (they never change once written). */
const IMMUTABLE = /^\d+\.sst$/;
/** The small mutable files a store needs to open: copied, because RocksDB rewrites or appends to them. */
const MUTABLE = /^(CURRENT|MANIFEST-\d+|OPTIONS-\d+)$/;

/**
 * Puts a consistent file set of the RocksDB directory `from` into `to`. Call it only while the database is
 * flushed and suspended (no background flush, compaction or file deletion), so that the MANIFEST names exactly
 * the SSTs present. WAL files are left out: after the flush they hold nothing that is not in an SST.
 * Only the MANIFEST that CURRENT names is taken; older ones are dead.
 */
export async function linkRocksFiles(from: string, to: string): Promise<LocalCheckpointFile[]> {
  const names = await readdir(from);
  const current = names.includes('CURRENT') ? await currentManifest(from) : undefined;
  if (current === undefined) throw new StateCheckpointError(`${from} is not a RocksDB directory (no CURRENT)`);
  const files: LocalCheckpointFile[] = [];
  for (const name of names.sort()) {
    if (name.startsWith('MANIFEST-') && name !== current) continue;
    if (IMMUTABLE.test(name)) await linkOrCopy(join(from, name), join(to, name));
    else if (MUTABLE.test(name)) await copyFile(join(from, name), join(to, name));
    else continue;
    files.push({ name, path: join(to, name), size: (await stat(join(to, name))).size });
  }
  return files;
}

/** Whether a file of a RocksDB checkpoint never changes once written (so a new store may hard-link it). */
export function isImmutableRocksFile(name: string): boolean {
  return IMMUTABLE.test(name);
}

export function isRocksCheckpointFile(name: string): boolean {
  return IMMUTABLE.test(name) || MUTABLE.test(name);
}

/** Hard link where the file system allows it (same device); a copy otherwise. */
export async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP') throw err;
    await copyFile(from, to);
  }
}

async function currentManifest(dir: string): Promise<string> {
  return (await readFile(join(dir, 'CURRENT'), 'utf8')).trim();
}

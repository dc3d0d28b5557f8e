import { copyFile, link, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StateCheckpointError } from '../errors';
import type { LocalCheckpointFile } from './local-checkpoint';
import { readManifest, tableFileName } from './rocks-manifest';

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

/**
 * Puts a consistent file set of the RocksDB directory `from` into `to` while background work goes on: reads the
 * MANIFEST that CURRENT names, takes its live table files from it, hard-links them and writes the MANIFEST copy
 * cut at its last complete record. Returns null when this cannot be done safely (a compaction deleted a live file
 * before it was linked, CURRENT moved to a new MANIFEST, or the MANIFEST holds something the reader does not
 * understand); `to` is then emptied and the caller retries or falls back to the suspend path. Call it after a
 * memtable flush, with no writes in between (the backend's queue held).
 */
export async function linkLiveRocksFiles(from: string, to: string): Promise<LocalCheckpointFile[] | null> {
  const manifestName = await currentManifest(from).catch(() => undefined);
  if (manifestName === undefined || !/^MANIFEST-\d+$/.test(manifestName)) return null;
  const manifest = readManifest(await readFile(join(from, manifestName)));
  if (manifest === null) return null;
  const files: LocalCheckpointFile[] = [];
  try {
    for (const table of manifest.tables) {
      const name = tableFileName(table.number);
      await linkOrCopy(join(from, name), join(to, name));
      const size = (await stat(join(to, name))).size;
      if (size !== table.size) throw new Error(`${name} has ${size} bytes, the MANIFEST says ${table.size}`);
      files.push({ name, path: join(to, name), size });
    }
    if ((await currentManifest(from)) !== manifestName) throw new Error('CURRENT moved to a new MANIFEST');
  } catch {
    await emptyDir(to);
    return null;
  }
  const copy = (await readFile(join(from, manifestName))).subarray(0, manifest.completeBytes);
  await writeFile(join(to, manifestName), copy);
  files.push({ name: manifestName, path: join(to, manifestName), size: copy.length });
  await writeFile(join(to, 'CURRENT'), `${manifestName}\n`);
  files.push({ name: 'CURRENT', path: join(to, 'CURRENT'), size: manifestName.length + 1 });
  for (const name of (await readdir(from)).filter((n) => /^OPTIONS-\d+$/.test(n)).sort()) {
    await copyFile(join(from, name), join(to, name));
    files.push({ name, path: join(to, name), size: (await stat(join(to, name))).size });
  }
  return files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export async function emptyDir(dir: string): Promise<void> {
  for (const name of await readdir(dir)) await rm(join(dir, name), { recursive: true, force: true });
}

import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import RocksDB from 'rocksdb-native';
import { afterEach, describe, expect, it } from 'vitest';
import { linkLiveRocksFiles } from './rocks-files';
import { readManifest, tableFileName } from './rocks-manifest';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'weir-manifest-'));
  dirs.push(dir);
  return dir;
};

async function put(db: RocksDB, from: number, count: number): Promise<void> {
  const batch = db.write({ capacity: count, autoDestroy: true });
  for (let i = from; i < from + count; i++) {
    const key = Buffer.alloc(8);
    key.writeUInt32BE(i % 50_000, 4);
    batch.tryPut(key, randomBytes(100));
  }
  await batch.flush();
}

describe('RocksDB MANIFEST reader', () => {
  it('finds exactly the live table files after flushes and compactions', async () => {
    const path = tempDir();
    const db = new RocksDB(path, { maxBackgroundJobs: 2 });
    await db.ready();
    try {
      // Many small flushes over overlapping keys: L0 files pile up and compactions replace them.
      for (let round = 0; round < 12; round++) {
        await put(db, round * 10_000, 10_000);
        await db.flush();
      }
      await db.suspend(); // quiescent: no compaction runs, obsolete files are gone
      const current = readFileSync(join(path, 'CURRENT'), 'utf8').trim();
      const state = readManifest(readFileSync(join(path, current)));
      const onDisk = readdirSync(path).filter((name) => name.endsWith('.sst')).sort();
      await db.resume();
      expect(state).not.toBeNull();
      expect(state!.tables.map((t) => tableFileName(t.number))).toEqual(onDisk);
      expect(state!.completeBytes).toBeGreaterThan(0);
    } finally {
      await db.close();
    }
  }, 30_000);

  it('gives up (null) on bytes it does not understand', () => {
    expect(readManifest(Buffer.from('definitely not a manifest, but long enough to hold headers'))).toBeNull();
    const unknownTag = Buffer.alloc(7 + 2);
    unknownTag.writeUInt16LE(2, 4);
    unknownTag[6] = 1; // a full record...
    unknownTag[7] = 0x7f; // ...holding tag 127, which no RocksDB writes
    unknownTag[8] = 0;
    expect(readManifest(unknownTag)).toBeNull();
  });

  it('links a set of files that opens as the database, while it keeps changing', async () => {
    const path = tempDir();
    const db = new RocksDB(path, { maxBackgroundJobs: 2 });
    await db.ready();
    const to = tempDir();
    try {
      for (let round = 0; round < 6; round++) {
        await put(db, round * 10_000, 10_000);
        await db.flush();
      }
      // A compaction finishing in between may delete a live file first: the store retries the same way.
      let files = null;
      for (let attempt = 0; attempt < 3 && files === null; attempt++) files = await linkLiveRocksFiles(path, to);
      expect(files).not.toBeNull();
      await put(db, 0, 50_000); // after the checkpoint: must not show in it
      await db.flush();
    } finally {
      await db.close();
    }
    const copy = new RocksDB(to);
    await copy.ready();
    let count = 0;
    for await (const entry of copy.iterator({})) count += entry.key.length > 0 ? 1 : 0;
    await copy.close();
    expect(count).toBe(50_000);
  }, 30_000);
});

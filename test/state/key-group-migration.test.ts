import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createStateBackend, type KeyedStateBackend, type StateRef } from '@weir/state';

/**
 * Moves half of the key groups of an on-disk (RocksDB) state backend to another one, the way a live rescale
 * does: snapshot each moving key group, restore it on the target, drop it on the source. Then reopens the target
 * from disk. Checks that nothing is lost, duplicated or leaks into a neighbouring key group.
 */

const KEY_GROUPS = 32;
const KEYS = 20_000;
const NOW = 1_000_000;
const dirs: string[] = [];

const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'weir-migration-'));
  dirs.push(dir);
  return dir;
};

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function refOf(i: number, namespace: string): StateRef {
  const key = Buffer.allocUnsafe(4);
  key.writeUInt32BE(i, 0);
  return { keyGroup: i % KEY_GROUPS, namespace, key };
}

async function countEntries(backend: KeyedStateBackend, keyGroups: number[], namespace: string): Promise<number> {
  let count = 0;
  for (const keyGroup of keyGroups) {
    for await (const [key, value] of backend.entries<{ i: number }>(keyGroup, namespace, NOW)) {
      expect(Buffer.from(key).readUInt32BE(0) % KEY_GROUPS).toBe(keyGroup);
      expect(value.i).toBe(Buffer.from(key).readUInt32BE(0));
      count++;
    }
  }
  return count;
}

describe('key-group migration between LSM state backends', () => {
  it('moves half the key groups with snapshot, restore and drop, and survives a reopen', async () => {
    const clock = () => NOW;
    const source = await createStateBackend({ kind: 'lsm', path: tempDir(), cacheEntries: 2_000, clock });
    const targetPath = tempDir();
    let target = await createStateBackend({ kind: 'lsm', path: targetPath, cacheEntries: 2_000, clock });

    for (let from = 0; from < KEYS; from += 1_000) {
      const batch = Array.from({ length: 1_000 }, (_, j) => from + j);
      await source.prefetch(batch.map((i) => refOf(i, 'op/sum')));
      for (const i of batch) {
        source.put(refOf(i, 'op/sum'), { i, tags: new Set([i % 3]) });
        // Every tenth key also has a timer entry that expired already: it must not travel.
        if (i % 10 === 0) source.put(refOf(i, 'op/timer'), { i }, { expiresAt: NOW - 1 });
      }
      await source.flush();
    }

    const moving = Array.from({ length: KEY_GROUPS / 2 }, (_, k) => k * 2);
    const staying = moving.map((k) => k + 1);
    for (const keyGroup of moving) {
      const image = await source.snapshotKeyGroup(keyGroup);
      await target.restoreKeyGroup(keyGroup, image);
      await source.dropKeyGroup(keyGroup);
    }

    expect(await countEntries(source, moving, 'op/sum')).toBe(0);
    expect(await countEntries(source, staying, 'op/sum')).toBe(KEYS / 2);
    expect(await countEntries(target, moving, 'op/sum')).toBe(KEYS / 2);
    expect(await countEntries(target, staying, 'op/sum')).toBe(0);
    expect(await countEntries(target, moving, 'op/timer')).toBe(0);

    await target.close();
    target = await createStateBackend({ kind: 'lsm', path: targetPath, clock });
    const sample = [0, 2, 4, 1, 3, 19_998, 19_999].map((i) => refOf(i, 'op/sum'));
    await target.prefetch(sample);
    expect(sample.map((ref) => (target.get<{ i: number }>(ref, NOW) ?? null)?.i ?? null)).toEqual([
      0,
      2,
      4,
      null,
      null,
      19_998,
      null,
    ]);
    expect(target.get<{ tags: Set<number> }>(sample[0], NOW)?.tags).toEqual(new Set([0]));
    await Promise.all([source.close(), target.close()]);
  });
});

/**
 * The job host's incremental checkpoints (per-key-group changelog chains) against the real S3 server and RocksDB:
 * two subtasks checkpoint with 1% of their keys changed each time, and the latest checkpoint restores at another
 * parallelism into backends holding exactly the source's state.
 */
import { join } from 'node:path';
import { CheckpointStore } from '@weir/checkpoint';
import { createStateBackend, type CheckpointableStateBackend } from '@weir/state';
import { afterAll, describe, expect, it } from 'vitest';
import { KeyGroupChains } from '../../apps/worker/src/checkpoints/key-group-chains';
import { fromDownloaded, toCheckpointParts } from '../../apps/worker/src/checkpoints/snapshot-codec';
import { MAX_PARALLELISM, randomIndexes, readKeys, refOf, removeTenant, TempDirs, testBlobStore, uniqueTenant, writeKeys } from './support';

const KEYS = 20_000;
const blob = testBlobStore();
const tenantId = uniqueTenant();
const dirs = new TempDirs();
const backends: CheckpointableStateBackend[] = [];

afterAll(async () => {
  for (const b of backends) await b.close().catch(() => undefined);
  await removeTenant(blob, tenantId);
  blob.close();
  dirs.removeAll();
});

/** Key groups of subtask i of n: contiguous ranges, as the engine's initial routing. */
const rangeOf = (i: number, n: number) => {
  const start = Math.ceil((i * MAX_PARALLELISM) / n);
  const end = Math.ceil(((i + 1) * MAX_PARALLELISM) / n) - 1;
  return Array.from({ length: end - start + 1 }, (_, k) => start + k);
};

async function backend(changelog: boolean): Promise<CheckpointableStateBackend> {
  const b = await createStateBackend({ kind: 'lsm', path: join(dirs.make('weir-chains-db-'), 'db'), ...(changelog ? { changelog: { materializeEvery: 8 } } : {}) });
  backends.push(b);
  return b;
}

describe('changelog chains on S3', () => {
  it('uploads a fraction of the state per checkpoint and restores at another parallelism exactly', async () => {
    const store = new CheckpointStore(blob);
    const job = { tenantId, jobId: 'chains' };
    const sources = [await backend(true), await backend(true)];
    const owned = [rangeOf(0, 2), rangeOf(1, 2)];
    const ownerOf = (i: number) => (refOf(i).keyGroup < owned[1][0] ? 0 : 1);
    const all = Array.from({ length: KEYS }, (_, i) => i);
    for (const s of [0, 1]) await writeKeys(sources[s], all.filter((i) => ownerOf(i) === s));
    const chains = new KeyGroupChains();
    const ratios: number[] = [];
    for (let checkpointId = 1; checkpointId <= 12; checkpointId++) {
      if (checkpointId > 1) {
        const changed = randomIndexes(KEYS, KEYS / 100);
        for (const s of [0, 1]) await writeKeys(sources[s], changed.filter((i) => ownerOf(i) === s));
        for (const s of [0, 1]) sources[s].delete(refOf(changed[s]));
      }
      const subtasks = await Promise.all(
        [0, 1].map(async (s) => ({ stageId: 'agg', subtask: s, keyGroups: await sources[s].checkpointKeyGroups(owned[s]) })),
      );
      const parts = toCheckpointParts({ checkpointId, subtasks }, (_, s) => owned[s], chains);
      const done = await store.write({ ...job, checkpointId, maxParallelism: MAX_PARALLELISM, parts });
      chains.completed(done.manifest);
      if (checkpointId > 1) ratios.push(done.manifest.stats.uploadedBytes / done.manifest.stats.stateBytes);
    }
    // 1% of the keys changed, plus 1/8 of the key groups re-imaged on their turn: far from a full upload.
    expect(Math.max(...ratios)).toBeLessThan(0.4);

    // Restore at parallelism 3: each new subtask takes its key groups from whichever old parts hold them.
    const { checkpoint } = await store.restoreLatestUsable(job, [{ operatorId: 'agg' }], dirs.make('weir-chains-dl-'));
    const images = new Map<number, Uint8Array>();
    for (const part of fromDownloaded(checkpoint).snapshot.subtasks) for (const [kg, image] of part.keyGroups!) images.set(kg, image);
    expect(images.size).toBe(MAX_PARALLELISM);
    const restored = [await backend(false), await backend(false), await backend(false)];
    for (let s = 0; s < 3; s++) for (const kg of rangeOf(s, 3)) await restored[s].restoreKeyGroup(kg, images.get(kg)!);
    const expected = await Promise.all(sources.map((b) => readKeys(b, KEYS)));
    const actual = await Promise.all(restored.map((b) => readKeys(b, KEYS)));
    for (let i = 0; i < KEYS; i++) {
      const newOwner = rangeOf(0, 3).includes(refOf(i).keyGroup) ? 0 : rangeOf(1, 3).includes(refOf(i).keyGroup) ? 1 : 2;
      expect(actual[newOwner][i], `key ${i}`).toBe(expected[ownerOf(i)][i]);
    }
  }, 120_000);
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore } from '@weir/checkpoint';
import type { CheckpointSnapshot } from '@weir/engine';
import { createStateBackend, type CheckpointableStateBackend, type StateRef } from '@weir/state';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBlobStore } from '../../../../libs/checkpoint/src/storage/memory-blob-store.fixture';
import { ChainBrokenError, chainSeedsOf, KeyGroupChains } from './key-group-chains';
import { fromDownloaded, toCheckpointParts } from './snapshot-codec';

const job = { tenantId: 't1', jobId: 'j1' };
const KEY_GROUPS = [0, 1, 2, 3, 4, 5, 6, 7];
const dirs: string[] = [];
const backends: CheckpointableStateBackend[] = [];
afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const ref = (i: number): StateRef => ({ keyGroup: i % KEY_GROUPS.length, namespace: 'agg/total', key: Buffer.from(`key-${i}`) });

async function setUp() {
  const backend = await createStateBackend({ kind: 'memory', changelog: { materializeEvery: 4 } });
  backends.push(backend);
  const blob = new MemoryBlobStore();
  const store = new CheckpointStore(blob);
  const chains = new KeyGroupChains();
  const checkpoint = async (checkpointId: number) => {
    const snapshot: CheckpointSnapshot = {
      checkpointId,
      subtasks: [
        { stageId: 'agg', subtask: 0, keyGroups: await backend.checkpointKeyGroups(KEY_GROUPS) },
        { stageId: 'in', subtask: 0, sourcePositions: { 'tx:0': String(checkpointId) } },
      ],
    };
    const parts = toCheckpointParts(snapshot, (stage) => (stage === 'agg' ? KEY_GROUPS : null), chains);
    const done = await store.write({ ...job, checkpointId, maxParallelism: 8, parts });
    chains.completed(done.manifest);
    return done;
  };
  const restored = async () => {
    const dir = mkdtempSync(join(tmpdir(), 'weir-chains-'));
    dirs.push(dir);
    const { checkpoint } = await store.restoreLatestUsable(job, [{ operatorId: 'agg' }, { operatorId: 'in' }], dir);
    return fromDownloaded(checkpoint).snapshot.subtasks.find((s) => s.stageId === 'agg')!.keyGroups!;
  };
  return { backend, blob, store, chains, checkpoint, restored };
}

describe('key-group chains in checkpoints', () => {
  it('uploads changes and the key groups on their turn, and restores every key group exactly', async () => {
    const { backend, checkpoint, restored } = await setUp();
    for (let i = 0; i < 800; i++) backend.put(ref(i), { total: i, pad: 'x'.repeat(50) });
    const first = await checkpoint(1);
    const uploaded: number[] = [];
    for (let c = 2; c <= 12; c++) {
      for (let i = 0; i < 16; i++) backend.put(ref((c * 37 + i * 11) % 800), { total: -c, pad: 'y'.repeat(50) });
      backend.delete(ref(c));
      const done = await checkpoint(c);
      uploaded.push(done.manifest.stats.uploadedBytes);
      const images = await restored();
      for (const kg of KEY_GROUPS) expect(Buffer.from(images.get(kg)!).equals(Buffer.from(await backend.snapshotKeyGroup(kg)))).toBe(true);
    }
    // 2% of the keys change per checkpoint, plus two key groups of eight on their turn: well under a full upload.
    expect(Math.max(...uploaded)).toBeLessThan(first.manifest.stats.uploadedBytes * 0.5);
  });

  it('keeps the links of a failed write and sends them with the next checkpoint', async () => {
    const { backend, blob, checkpoint, restored } = await setUp();
    for (let i = 0; i < 100; i++) backend.put(ref(i), i);
    await checkpoint(1);
    backend.put(ref(5), 'changed before the failure');
    blob.failPutsMatching = /manifest\.json$/;
    await expect(checkpoint(2)).rejects.toThrow(/injected/);
    blob.failPutsMatching = undefined;
    backend.put(ref(6), 'changed after');
    await checkpoint(3);
    const images = await restored();
    for (const kg of KEY_GROUPS) expect(Buffer.from(images.get(kg)!).equals(Buffer.from(await backend.snapshotKeyGroup(kg)))).toBe(true);
  });

  it('continues the stored chains after a recovery: the first checkpoint uploads changes, not full images', async () => {
    const { backend, store, checkpoint } = await setUp();
    for (let i = 0; i < 800; i++) backend.put(ref(i), { total: i, pad: 'x'.repeat(50) });
    const first = await checkpoint(1);
    backend.put(ref(3), 'before the crash');
    await checkpoint(2);
    // A new job host: download the latest checkpoint, restore its key groups, continue its chains.
    const dir = mkdtempSync(join(tmpdir(), 'weir-chains-'));
    dirs.push(dir);
    const { checkpoint: downloaded } = await store.restoreLatestUsable(job, [{ operatorId: 'agg' }, { operatorId: 'in' }], dir);
    const seeds = chainSeedsOf(downloaded);
    const recovered = await createStateBackend({ kind: 'memory', changelog: { materializeEvery: 4, continueFrom: KEY_GROUPS } });
    backends.push(recovered);
    for (const [kg, image] of fromDownloaded(downloaded).snapshot.subtasks.find((p) => p.stageId === 'agg')!.keyGroups!) {
      await recovered.restoreKeyGroup(kg, image);
    }
    const chains = new KeyGroupChains(seeds);
    recovered.put(ref(4), 'after the recovery');
    const snapshot: CheckpointSnapshot = { checkpointId: 3, subtasks: [{ stageId: 'agg', subtask: 0, keyGroups: await recovered.checkpointKeyGroups(KEY_GROUPS) }] };
    const done = await store.write({ ...job, checkpointId: 3, maxParallelism: 8, parts: toCheckpointParts(snapshot, () => KEY_GROUPS, chains) });
    expect(done.manifest.stats.uploadedBytes).toBeLessThan(first.manifest.stats.uploadedBytes * 0.5);
    const dir2 = mkdtempSync(join(tmpdir(), 'weir-chains-'));
    dirs.push(dir2);
    const again = await store.download(done, [{ operatorId: 'agg' }], dir2);
    const images = fromDownloaded(again).snapshot.subtasks[0].keyGroups!;
    for (const kg of KEY_GROUPS) expect(Buffer.from(images.get(kg)!).equals(Buffer.from(await recovered.snapshotKeyGroup(kg)))).toBe(true);
  });

  it('refuses changes it has no full image for (a lost cut), instead of storing a chain that cannot restore', () => {
    const chains = new KeyGroupChains();
    const changes = Buffer.from('WKGC\u0000\u0001\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000', 'latin1');
    expect(() => chains.partOf(1, 'agg', 0, new Map([[0, changes]]), [0])).toThrow(ChainBrokenError);
  });
});

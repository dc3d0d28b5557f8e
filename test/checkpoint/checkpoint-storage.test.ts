import { join } from 'node:path';
import type { BlobStore } from '@weir/blob';
import {
  CheckpointStore,
  CorruptCheckpointError,
  MissingCheckpointFileError,
  type CompletedCheckpoint,
  type CheckpointPartInput,
} from '@weir/checkpoint';
import {
  copyKeyGroups,
  createStateBackend,
  openStateBackendFromCheckpoint,
  type CheckpointableStateBackend,
  type KeyedStateBackend,
} from '@weir/state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  lsmBackend,
  MAX_PARALLELISM,
  randomIndexes,
  readKeys,
  refOf,
  removeTenant,
  TempDirs,
  testBlobStore,
  uniqueTenant,
  writeKeys,
} from './support';

/**
 * Checkpoint storage against the real S3 server (s3rver) with real RocksDB state: incremental uploads, restore,
 * restore at another parallelism, a truncated file and the fallback, and retention.
 */

const KEYS = 40_000;
const CHANGED = KEYS / 100;

let blob: BlobStore;
let store: CheckpointStore;
const tenantId = uniqueTenant();
const dirs = new TempDirs();
const backends: KeyedStateBackend[] = [];

async function track<T extends KeyedStateBackend>(backend: Promise<T>): Promise<T> {
  const b = await backend;
  backends.push(b);
  return b;
}

beforeAll(async () => {
  blob = testBlobStore();
  await blob.ensureBucket();
  store = new CheckpointStore(blob);
});

afterAll(async () => {
  for (const backend of backends) await backend.close().catch(() => undefined);
  await removeTenant(blob, tenantId);
  blob.close();
  dirs.removeAll();
});

/** Checkpoints one backend holding every key group as subtask 0 of operator `agg`, with engine metadata. */
async function checkpointOf(
  jobId: string,
  checkpointId: number,
  subtasks: { backend: CheckpointableStateBackend; start: number; end: number }[],
): Promise<CompletedCheckpoint> {
  const parts: CheckpointPartInput[] = [];
  for (const [subtask, { backend, start, end }] of subtasks.entries()) {
    const state = await backend.checkpoint(join(dirs.make(), 'local'));
    parts.push({
      operatorId: 'agg',
      subtask,
      keyGroups: { start, end },
      state,
      metadata: { timers: Buffer.from(`timers of ${subtask}`), broadcast: Buffer.from('same everywhere') },
    });
  }
  parts.push({ operatorId: 'tx', subtask: 0, metadata: { offsets: Buffer.from(JSON.stringify({ 'tx:0': String(checkpointId * 100) })) } });
  return store.write({ tenantId, jobId, checkpointId, maxParallelism: MAX_PARALLELISM, parts });
}

describe('incremental checkpoints of a RocksDB backend', () => {
  const jobId = 'incremental';
  let backend: CheckpointableStateBackend;
  const completed: CompletedCheckpoint[] = [];

  it('uploads everything once, then only the files that are new (1% of keys changed)', async () => {
    backend = await track(lsmBackend(dirs));
    await writeKeys(backend, Array.from({ length: KEYS }, (_, i) => i));
    completed.push(await checkpointOf(jobId, 1, [{ backend, start: 0, end: MAX_PARALLELISM - 1 }]));
    for (const checkpointId of [2, 3]) {
      await writeKeys(backend, randomIndexes(KEYS, CHANGED));
      completed.push(await checkpointOf(jobId, checkpointId, [{ backend, start: 0, end: MAX_PARALLELISM - 1 }]));
    }
    const [first, second, third] = completed.map((c) => c.manifest.stats);
    expect(first.stateBytes).toBeGreaterThan(KEYS * 100);
    expect(first.uploadedBytes).toBe(first.stateBytes);
    for (const later of [second, third]) {
      expect(later.reusedFiles).toBeGreaterThan(0);
      // New SSTs of the changed keys, the MANIFEST and the offsets: a few percent of the state at most.
      expect(later.uploadedBytes).toBeLessThan(later.stateBytes * 0.1);
    }
    expect(completed[2].manifest.baseCheckpointId).toBe(2);
    expect((await store.latest({ tenantId, jobId }))?.manifest.checkpointId).toBe(3);
  });

  it('restores the latest checkpoint into a fresh backend equal to the original', async () => {
    const { checkpoint, skipped } = await store.restoreLatestUsable({ tenantId, jobId }, [{ operatorId: 'agg' }, { operatorId: 'tx' }], dirs.make());
    expect(skipped).toEqual([]);
    expect(checkpoint.manifest.checkpointId).toBe(3);
    const agg = checkpoint.parts.find((p) => p.operatorId === 'agg')!;
    expect(agg.metadata.timers.toString()).toBe('timers of 0');
    expect(JSON.parse(checkpoint.parts.find((p) => p.operatorId === 'tx')!.metadata.offsets.toString())).toEqual({ 'tx:0': '300' });
    const restored = await track(openStateBackendFromCheckpoint({ checkpoint: agg.state!, path: join(dirs.make(), 'db') }));
    expect(await readKeys(restored, KEYS)).toEqual(await readKeys(backend, KEYS));
  });
});

describe('restoring at a different parallelism', () => {
  it('rebuilds key groups 32..95 of a 2-subtask checkpoint (0..63 and 64..127) in one backend', async () => {
    const jobId = 'rescale';
    const low = await track(lsmBackend(dirs));
    const high = await track(lsmBackend(dirs));
    const all = Array.from({ length: 12_800 }, (_, i) => i);
    const lowWritten = await writeKeys(low, all.filter((i) => refOf(i).keyGroup <= 63));
    const highWritten = await writeKeys(high, all.filter((i) => refOf(i).keyGroup >= 64));
    await checkpointOf(jobId, 1, [
      { backend: low, start: 0, end: 63 },
      { backend: high, start: 64, end: 127 },
    ]);

    const wanted = { start: 32, end: 95 };
    const { checkpoint } = await store.restoreLatestUsable({ tenantId, jobId }, [{ operatorId: 'agg', keyGroups: wanted }], dirs.make());
    expect(checkpoint.parts.map((p) => p.subtask)).toEqual([0, 1]);
    const target = await track(createStateBackend({ kind: 'lsm', path: join(dirs.make(), 'db') }));
    for (const part of checkpoint.parts) {
      const source = await openStateBackendFromCheckpoint({ checkpoint: part.state!, path: join(dirs.make(), 'db') });
      const ranges = part.keyGroups!
        .map((r) => ({ start: Math.max(r.start, wanted.start), end: Math.min(r.end, wanted.end) }))
        .filter((r) => r.start <= r.end);
      await copyKeyGroups(source, target, ranges);
      await source.close();
    }
    const values = await readKeys(target, all.length);
    for (const i of all) {
      const kg = refOf(i).keyGroup;
      const expected = kg < wanted.start || kg > wanted.end ? undefined : (lowWritten.get(i) ?? highWritten.get(i));
      expect(values[i]).toBe(expected);
    }
  });
});

describe('a truncated checkpoint file', () => {
  it('raises CorruptCheckpointError naming the file, and recovery falls back to the previous checkpoint', async () => {
    const jobId = 'truncated';
    const backend = await track(lsmBackend(dirs));
    await writeKeys(backend, Array.from({ length: 10_000 }, (_, i) => i));
    const first = await checkpointOf(jobId, 1, [{ backend, start: 0, end: MAX_PARALLELISM - 1 }]);
    const atFirst = await readKeys(backend, 10_000);
    await writeKeys(backend, randomIndexes(10_000, 100));
    const second = await checkpointOf(jobId, 2, [{ backend, start: 0, end: MAX_PARALLELISM - 1 }]);

    const known = new Set(first.manifest.operators[0].subtasks[0].files.map((f) => f.sha256));
    const fresh = second.manifest.operators[0].subtasks[0].files.find((f) => f.name.endsWith('.sst') && !known.has(f.sha256))!;
    expect(fresh).toBeDefined();
    const key = second.manifest.sharedPrefix + fresh.sha256;
    const chunks: Buffer[] = [];
    for await (const chunk of await blob.get(key)) chunks.push(chunk as Buffer);
    const bytes = Buffer.concat(chunks);
    await blob.put(key, bytes.subarray(0, Math.floor(bytes.length / 2)));

    const error = await store.download(second, [{ operatorId: 'agg' }], dirs.make()).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(CorruptCheckpointError);
    expect((error as CorruptCheckpointError).file).toBe(`agg/0/${fresh.name}`);
    expect((error as Error).message).toMatch(/truncated/);

    const { checkpoint, skipped } = await store.restoreLatestUsable({ tenantId, jobId }, [{ operatorId: 'agg' }], dirs.make());
    expect(checkpoint.manifest.checkpointId).toBe(1);
    expect(skipped).toEqual([{ checkpointId: 2, reason: expect.stringContaining(`agg/0/${fresh.name}`) }]);
    const restored = await track(openStateBackendFromCheckpoint({ checkpoint: checkpoint.parts[0].state!, path: join(dirs.make(), 'db') }));
    expect(await readKeys(restored, 10_000)).toEqual(atFirst);

    await blob.delete(key);
    await expect(store.download(second, [{ operatorId: 'agg' }], dirs.make())).rejects.toBeInstanceOf(MissingCheckpointFileError);
  });
});

describe('retention', () => {
  it('keeps the last K checkpoints and savepoints, and deletes only files no one references', async () => {
    const jobId = 'retention';
    const job = { tenantId, jobId };
    const backend = await track(lsmBackend(dirs));
    await writeKeys(backend, Array.from({ length: 10_000 }, (_, i) => i));
    const checkpoints = [await checkpointOf(jobId, 1, [{ backend, start: 0, end: 127 }])];
    const state = await backend.checkpoint(join(dirs.make(), 'local'));
    const savepoint = await store.write({
      ...job,
      checkpointId: 1,
      savepointId: 'before-upgrade',
      maxParallelism: MAX_PARALLELISM,
      parts: [{ operatorId: 'agg', subtask: 0, keyGroups: { start: 0, end: 127 }, state }],
    });
    expect(savepoint.manifest.stats.uploadedFiles).toBe(0);
    // A retried trigger with the same savepoint id returns the savepoint already taken.
    const again = await store.write({ ...job, checkpointId: 9, savepointId: 'before-upgrade', maxParallelism: MAX_PARALLELISM, parts: [] });
    expect(again.manifest).toEqual(savepoint.manifest);
    for (const checkpointId of [2, 3, 4]) {
      await writeKeys(backend, randomIndexes(10_000, 100));
      checkpoints.push(await checkpointOf(jobId, checkpointId, [{ backend, start: 0, end: 127 }]));
    }
    const prefix = savepoint.manifest.sharedPrefix;
    await blob.put(`${prefix}${'0'.repeat(64)}`, 'left by a checkpoint that failed');

    const files = (c: CompletedCheckpoint) => new Set([...c.manifest.operators.flatMap((o) => o.subtasks.flatMap((s) => [...s.files, ...s.metadata]))].map((f) => f.sha256));
    const sharedNow = async () => {
      const out = new Set<string>();
      for await (const info of blob.list(prefix)) out.add(info.key.slice(prefix.length));
      return out;
    };
    const before = await sharedNow();
    // Retention runs "later" so that every upload above counts as settled.
    const later = new CheckpointStore(blob, { clock: () => Date.now() + 120_000, safetyMarginMs: 10_000 });
    const report = await later.retain(job, 2);
    expect(report.keptCheckpoints).toEqual([4, 3]);
    expect(report.droppedCheckpoints).toEqual([2, 1]);

    const needed = new Set([...files(checkpoints[2]), ...files(checkpoints[3]), ...files(savepoint)]);
    const after = await sharedNow();
    for (const sha of needed) expect(after.has(sha)).toBe(true);
    const deleted = [...before].filter((sha) => !after.has(sha));
    expect(deleted).toContain('0'.repeat(64));
    expect(deleted.every((sha) => !needed.has(sha))).toBe(true);
    expect(report.deletedFiles).toBe(deleted.length);
    expect((await store.list(job)).map((r) => (r.kind === 'checkpoint' ? r.checkpointId : r.savepointId))).toEqual([3, 4, 'before-upgrade']);

    // Disposing the savepoint frees the files only it still needed.
    expect(await store.dispose(job, 'before-upgrade')).toBe(true);
    await later.retain(job, 2);
    const last = await sharedNow();
    const stillNeeded = new Set([...files(checkpoints[2]), ...files(checkpoints[3])]);
    expect([...last].sort()).toEqual([...stillNeeded].sort());
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LocalCheckpoint } from '@weir/state';
import { CheckpointAbortedError, CorruptCheckpointError, InvalidCheckpointError, StaleReuseError } from '../errors';
import { CheckpointStore } from './checkpoint-store';
import { MemoryBlobStore } from './memory-blob-store.fixture';

const job = { tenantId: 't1', jobId: 'j1' };
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function localCheckpoint(files: Record<string, string>): LocalCheckpoint {
  const dir = mkdtempSync(join(tmpdir(), 'weir-cp-spec-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return {
    kind: 'lsm',
    dir,
    files: Object.entries(files).map(([name, text]) => ({ name, path: join(dir, name), size: Buffer.byteLength(text) })),
  };
}

const command = (checkpointId: number, state: LocalCheckpoint) => ({
  ...job,
  checkpointId,
  maxParallelism: 8,
  parts: [{ operatorId: 'agg', subtask: 0, keyGroups: { start: 0, end: 7 }, state, metadata: { timers: Buffer.from('t') } }],
});

describe('CheckpointStore.write', () => {
  const blobs = (checkpointId: number, metadata: Record<string, string>, reusedMetadata: { name: string; sha256: string; size: number }[] = []) => ({
    ...job,
    checkpointId,
    maxParallelism: 8,
    parts: [{ operatorId: 'agg', subtask: 0, keyGroups: { start: 0, end: 7 }, reusedMetadata,
      metadata: Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v)])) }],
  });

  it('references reused blobs of the base without their bytes, and refuses ones the base does not have', async () => {
    const store = new CheckpointStore(new MemoryBlobStore());
    const first = await store.write(blobs(1, { 'kg-0': 'full image zero', 'kg-1': 'full image one' }));
    const kept = first.manifest.operators[0].subtasks[0].metadata.filter((m) => m.name === 'kg-0');
    const second = await store.write(blobs(2, { 'kg-1': 'changes of one' }, kept));
    expect(second.manifest.stats).toMatchObject({ uploadedFiles: 1, reusedFiles: 1, uploadedBytes: 14 });
    expect(second.manifest.operators[0].subtasks[0].metadata.map((m) => m.name)).toEqual(['kg-0', 'kg-1']);
    const restored = await store.download(second, [{ operatorId: 'agg' }], mkdtempSync(join(tmpdir(), 'weir-cp-spec-')));
    expect(restored.parts[0].metadata['kg-0'].toString()).toBe('full image zero');
    // The first checkpoint's kg-1 is not in the base (checkpoint 2) any more: retention may have deleted it.
    const stale = first.manifest.operators[0].subtasks[0].metadata.filter((m) => m.name === 'kg-1');
    await expect(store.write(blobs(3, {}, stale))).rejects.toThrow(StaleReuseError);
    expect((await store.latest(job))!.manifest.checkpointId).toBe(2);
  });

  it('gives a write up when its signal aborts: no manifest', async () => {
    const store = new CheckpointStore(new MemoryBlobStore());
    const controller = new AbortController();
    controller.abort();
    await expect(store.write({ ...blobs(1, { 'kg-0': 'x' }), signal: controller.signal })).rejects.toThrow(CheckpointAbortedError);
    expect(await store.latest(job)).toBeNull();
  });

  it('writes a pending marker first, the manifest last, then removes the marker', async () => {
    const blob = new MemoryBlobStore();
    await new CheckpointStore(blob).write(command(1, localCheckpoint({ '000001.sst': 'sst one', CURRENT: 'MANIFEST-1' })));
    const puts = blob.log.filter((line) => line.startsWith('put '));
    expect(puts[0]).toMatch(/pending\/checkpoint-1\.json$/);
    expect(puts[puts.length - 1]).toBe('put tenants/t1/jobs/j1/checkpoints/00000000000000000001/manifest.json');
    expect(blob.log[blob.log.length - 1]).toBe('delete tenants/t1/jobs/j1/pending/checkpoint-1.json');
  });

  it('uploads only files the previous checkpoint does not reference, each content once', async () => {
    const blob = new MemoryBlobStore();
    const store = new CheckpointStore(blob);
    const first = await store.write(command(1, localCheckpoint({ '000001.sst': 'sst one', CURRENT: 'MANIFEST-1' })));
    expect(first.manifest.stats).toMatchObject({ uploadedFiles: 3, reusedFiles: 0 });
    const second = await store.write(command(2, localCheckpoint({ '000001.sst': 'sst one', '000002.sst': 'sst two', CURRENT: 'MANIFEST-1' })));
    expect(second.manifest.stats).toMatchObject({ uploadedFiles: 1, reusedFiles: 3, uploadedBytes: 7 });
    expect(second.manifest.baseCheckpointId).toBe(1);
  });

  it('leaves no manifest and no marker when an upload fails', async () => {
    const blob = new MemoryBlobStore();
    blob.failPutsMatching = /shared\//;
    const store = new CheckpointStore(blob);
    await expect(store.write(command(1, localCheckpoint({ '000001.sst': 'x' })))).rejects.toThrow(/injected failure/);
    expect([...blob.objects.keys()].filter((key) => !key.includes('/shared/'))).toEqual([]);
    expect(await store.latest(job)).toBeNull();
  });

  it('refuses overlapping key groups, duplicate parts and ranges beyond max parallelism', async () => {
    const store = new CheckpointStore(new MemoryBlobStore());
    const base = { ...job, checkpointId: 1, maxParallelism: 8 };
    await expect(
      store.write({ ...base, parts: [{ operatorId: 'a', subtask: 0, keyGroups: { start: 0, end: 4 } }, { operatorId: 'a', subtask: 1, keyGroups: { start: 4, end: 7 } }] }),
    ).rejects.toThrow(/overlap subtask 0/);
    await expect(store.write({ ...base, parts: [{ operatorId: 'a', subtask: 0 }, { operatorId: 'a', subtask: 0 }] })).rejects.toThrow(
      InvalidCheckpointError,
    );
    await expect(store.write({ ...base, parts: [{ operatorId: 'a', subtask: 0, keyGroups: { start: 0, end: 8 } }] })).rejects.toThrow(
      /outside 0..7/,
    );
  });
});

describe('CheckpointStore.download', () => {
  it('names the corrupt file when its bytes differ from the manifest', async () => {
    const blob = new MemoryBlobStore();
    const store = new CheckpointStore(blob);
    const written = await store.write(command(1, localCheckpoint({ '000001.sst': 'sst one' })));
    const file = written.manifest.operators[0].subtasks[0].files[0];
    blob.objects.get(written.manifest.sharedPrefix + file.sha256)!.bytes = Buffer.from('sst 1ne');
    const dir = mkdtempSync(join(tmpdir(), 'weir-cp-spec-'));
    dirs.push(dir);
    const error = await store.download(written, [{ operatorId: 'agg' }], dir).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(CorruptCheckpointError);
    expect(error).toMatchObject({ file: 'agg/0/000001.sst', checkpoint: 'checkpoint 1' });
    expect((error as Error).message).toMatch(/is corrupt: sha256/);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LocalCheckpoint } from '@weir/state';
import { CorruptCheckpointError, InvalidCheckpointError } from '../errors';
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

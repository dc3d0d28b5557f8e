import { mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  copyKeyGroups,
  createStateBackend,
  openStateBackendFromCheckpoint,
  StateCheckpointError,
  type CheckpointableStateBackend,
  type KeyedStateBackend,
  type StateBackendKind,
  type StateRef,
} from '../index';

const dirs: string[] = [];
const open: KeyedStateBackend[] = [];

afterEach(async () => {
  for (const backend of open.splice(0)) await backend.close().catch(() => undefined);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'weir-state-cp-'));
  dirs.push(dir);
  return dir;
}

async function backendOf(kind: StateBackendKind): Promise<CheckpointableStateBackend> {
  const backend = await createStateBackend({ kind, path: kind === 'lsm' ? join(tempDir(), 'db') : undefined });
  open.push(backend);
  return backend;
}

function track<T extends KeyedStateBackend>(backend: T): T {
  open.push(backend);
  return backend;
}

const ref = (keyGroup: number, key: string): StateRef => ({ keyGroup, namespace: 'op/v', key: Buffer.from(key) });
const refs = Array.from({ length: 400 }, (_, i) => ref(i % 128, `key-${i}`));

async function fill(backend: KeyedStateBackend, tag: string): Promise<void> {
  refs.forEach((r, i) => backend.put(r, { i, tag }));
  await backend.flush();
}

async function valuesOf(backend: KeyedStateBackend, which = refs): Promise<unknown[]> {
  await backend.prefetch(which);
  return which.map((r) => backend.get(r, 0));
}

describe.each<StateBackendKind>(['memory', 'lsm'])('local checkpoints (%s)', (kind) => {
  it('restores exactly the state at checkpoint time, unaffected by later writes', async () => {
    const backend = await backendOf(kind);
    await fill(backend, 'before');
    backend.put(ref(3, 'cached-only'), 'dirty at checkpoint time');
    const checkpoint = await backend.checkpoint(join(tempDir(), 'cp'));
    expect(checkpoint.kind).toBe(kind);
    expect(checkpoint.files.length).toBeGreaterThan(0);
    expect(checkpoint.files.every((f) => f.size > 0)).toBe(true);
    // Nothing races it here, so the LSM checkpoint links the MANIFEST's live files without pausing RocksDB.
    expect(checkpoint.pausedBackgroundWork).toBe(kind === 'lsm' ? false : undefined);
    await fill(backend, 'after');

    const restored = track(await openStateBackendFromCheckpoint({ checkpoint, path: join(tempDir(), 'restored') }));
    expect(await valuesOf(restored)).toEqual(refs.map((_, i) => ({ i, tag: 'before' })));
    expect(await valuesOf(restored, [ref(3, 'cached-only')])).toEqual(['dirty at checkpoint time']);
    expect(await valuesOf(backend)).toEqual(refs.map((_, i) => ({ i, tag: 'after' })));
  });

  it('refuses a directory that is not empty', async () => {
    const backend = await backendOf(kind);
    const dir = join(tempDir(), 'cp');
    await backend.checkpoint(dir);
    await expect(backend.checkpoint(dir)).rejects.toThrow(StateCheckpointError);
  });

  it('opens as the other kind of backend by copying every key group', async () => {
    const backend = await backendOf(kind);
    await fill(backend, 'x');
    const checkpoint = await backend.checkpoint(join(tempDir(), 'cp'));
    const other: StateBackendKind = kind === 'lsm' ? 'memory' : 'lsm';
    const restored = track(
      await openStateBackendFromCheckpoint({ checkpoint, kind: other, path: join(tempDir(), 'other') }),
    );
    expect(restored.kind).toBe(other);
    expect(await valuesOf(restored)).toEqual(refs.map((_, i) => ({ i, tag: 'x' })));
  });
});

describe('copyKeyGroups', () => {
  it('replaces exactly the chosen key-group ranges of the target', async () => {
    const from = await backendOf('lsm');
    const to = await backendOf('memory');
    await fill(from, 'from');
    await fill(to, 'to');
    to.put(ref(5, 'dirty-in-range'), 'dropped');
    const result = await copyKeyGroups(from, to, [
      { start: 0, end: 9 },
      { start: 100, end: 127 },
    ]);
    const copied = refs.filter((r) => r.keyGroup <= 9 || r.keyGroup >= 100);
    expect(result.entries).toBe(copied.length);
    const values = await valuesOf(to);
    refs.forEach((r, i) => {
      const expected = r.keyGroup <= 9 || r.keyGroup >= 100 ? 'from' : 'to';
      expect(values[i]).toEqual({ i, tag: expected });
    });
    // A key group in a copied range holds only what the source had: the target's dirty write is gone.
    expect(await valuesOf(to, [ref(5, 'dirty-in-range')])).toEqual([undefined]);
  });

  it('leaves out values that have expired', async () => {
    let now = 1_000;
    const from = track(await createStateBackend({ kind: 'memory', clock: () => now }));
    const to = await backendOf('memory');
    from.put(ref(1, 'short'), 's', { expiresAt: 2_000 });
    from.put(ref(1, 'long'), 'l', { expiresAt: 9_000 });
    await from.flush();
    now = 5_000;
    expect((await copyKeyGroups(from, to, [{ start: 1, end: 1 }])).entries).toBe(1);
  });
});

describe('corrupt local checkpoints', () => {
  it('rejects a truncated memory image before opening anything', async () => {
    const backend = await backendOf('memory');
    await fill(backend, 'x');
    const checkpoint = await backend.checkpoint(join(tempDir(), 'cp'));
    truncateSync(checkpoint.files[0].path, checkpoint.files[0].size - 10);
    await expect(openStateBackendFromCheckpoint({ checkpoint })).rejects.toThrow(StateCheckpointError);
  });

  it('rejects an lsm checkpoint without its MANIFEST', async () => {
    const backend = await backendOf('lsm');
    await fill(backend, 'x');
    const checkpoint = await backend.checkpoint(join(tempDir(), 'cp'));
    const partial = { ...checkpoint, files: checkpoint.files.filter((f) => !f.name.startsWith('MANIFEST-')) };
    await expect(openStateBackendFromCheckpoint({ checkpoint: partial, path: join(tempDir(), 'r') })).rejects.toThrow(
      /lacks MANIFEST-/,
    );
  });
});

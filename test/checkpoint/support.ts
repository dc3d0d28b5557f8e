import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBlobStore, type BlobStore } from '@weir/blob';
import { loadConfig } from '@weir/config';
import { createStateBackend, type CheckpointableStateBackend, type KeyedStateBackend, type StateRef } from '@weir/state';

export const MAX_PARALLELISM = 128;
export const NAMESPACE = 'agg/total';

export function testBlobStore(): BlobStore {
  return createBlobStore(loadConfig({ ...process.env, WEIR_LOG_LEVEL: 'warn' }));
}

/** A tenant of its own per test file, removed afterwards with everything under it. */
export function uniqueTenant(): string {
  return `cp-test-${randomUUID().slice(0, 8)}`;
}

export async function removeTenant(blob: BlobStore, tenantId: string): Promise<void> {
  const keys: string[] = [];
  for await (const info of blob.list(`tenants/${tenantId}/`)) keys.push(info.key);
  for (const key of keys) await blob.delete(key);
}

export class TempDirs {
  private readonly dirs: string[] = [];
  make(prefix = 'weir-cp-'): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.dirs.push(dir);
    return dir;
  }
  removeAll(): void {
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

export function refOf(i: number): StateRef {
  return { keyGroup: i % MAX_PARALLELISM, namespace: NAMESPACE, key: Buffer.from(`key-${i}`) };
}

export async function lsmBackend(dirs: TempDirs): Promise<CheckpointableStateBackend> {
  return createStateBackend({ kind: 'lsm', path: join(dirs.make('weir-cp-db-'), 'db') });
}

/** Writes `indexes` with fresh random values (incompressible), in batches of 1,000; returns what it wrote. */
export async function writeKeys(backend: KeyedStateBackend, indexes: Iterable<number>, valueBytes = 100): Promise<Map<number, string>> {
  const written = new Map<number, string>();
  let pending = 0;
  for (const i of indexes) {
    const value = randomBytes(valueBytes / 2).toString('hex');
    backend.put(refOf(i), value);
    written.set(i, value);
    if (++pending === 1000) {
      await backend.flush();
      pending = 0;
    }
  }
  await backend.flush();
  return written;
}

/** Values of keys 0..count-1 (undefined where absent), read in batches. */
export async function readKeys(backend: KeyedStateBackend, count: number): Promise<(string | undefined)[]> {
  const out: (string | undefined)[] = [];
  for (let start = 0; start < count; start += 1000) {
    const refs = Array.from({ length: Math.min(1000, count - start) }, (_, j) => refOf(start + j));
    await backend.prefetch(refs);
    for (const ref of refs) out.push(backend.get<string>(ref, 0));
  }
  return out;
}

/** `count` distinct indexes out of 0..total-1, spread at random. */
export function randomIndexes(total: number, count: number): number[] {
  const picked = new Set<number>();
  while (picked.size < count) picked.add(Math.floor(Math.random() * total));
  return [...picked];
}

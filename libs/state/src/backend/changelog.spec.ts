import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  composeKeyGroupImage,
  createStateBackend,
  isChangesImage,
  StateImageError,
  type CheckpointableStateBackend,
  type StateRef,
} from '../index';
import { readKeyGroupChanges, writeKeyGroupChanges } from '../snapshot/key-group-changes';

const open: CheckpointableStateBackend[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const b of open.splice(0)) await b.close().catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function backendOf(kind: 'memory' | 'lsm', materializeEvery = 1000, clock: () => number = Date.now) {
  const path = kind === 'lsm' ? mkdtempSync(join(tmpdir(), 'weir-changelog-')) : undefined;
  if (path) dirs.push(path);
  const b = await createStateBackend({ kind, path, changelog: { materializeEvery }, clock });
  open.push(b);
  return b;
}

const ref = (keyGroup: number, key: string): StateRef => ({ keyGroup, namespace: 'op/v', key: Buffer.from(key) });

/** What a restore rebuilds: per key group, the last full image and the changes after it. */
class Chains {
  readonly chains = new Map<number, { base: Uint8Array; changes: Uint8Array[] }>();
  add(images: Map<number, Uint8Array>): void {
    for (const [kg, image] of images) {
      if (isChangesImage(image)) this.chains.get(kg)!.changes.push(image);
      else this.chains.set(kg, { base: image, changes: [] });
    }
  }
  image(kg: number): Buffer {
    const c = this.chains.get(kg)!;
    return composeKeyGroupImage(kg, c.base, c.changes);
  }
}

describe.each(['memory', 'lsm'] as const)('changelog checkpoints (%s)', (kind) => {
  it('hands over full images first, then only the changed key groups, which compose back into the full image', async () => {
    const b = await backendOf(kind);
    for (let i = 0; i < 50; i++) b.put(ref(i % 5, `k${i}`), { i });
    const chains = new Chains();
    const first = await b.checkpointKeyGroups([0, 1, 2, 3, 4]);
    expect([...first.values()].every((img) => !isChangesImage(img))).toBe(true);
    chains.add(first);

    b.put(ref(1, 'k1'), { i: 'changed' });
    b.delete(ref(1, 'k6'));
    b.put(ref(3, 'new'), [1, 2, 3]);
    await b.flush(); // a flush between checkpoints is recorded too
    b.put(ref(3, 'new'), [4]);
    const second = await b.checkpointKeyGroups([0, 1, 2, 3, 4]);
    expect([...second.keys()].sort()).toEqual([1, 3]);
    expect([...second.values()].every(isChangesImage)).toBe(true);
    expect(readKeyGroupChanges(second.get(3)!, 3)).toHaveLength(1); // the last write of a key wins
    chains.add(second);

    for (const kg of [0, 1, 2, 3, 4]) expect(chains.image(kg).equals(Buffer.from(await b.snapshotKeyGroup(kg)))).toBe(true);
  });

  it('takes a full image of a key group replaced outside the write path, and forgets key groups it no longer owns', async () => {
    const b = await backendOf(kind);
    b.put(ref(0, 'a'), 1);
    b.put(ref(1, 'b'), 2);
    await b.checkpointKeyGroups([0, 1]);
    await b.restoreKeyGroup(0, await b.snapshotKeyGroup(1).then(() => b.snapshotKeyGroup(0)));
    b.put(ref(1, 'b'), 3);
    const next = await b.checkpointKeyGroups([0]);
    expect(isChangesImage(next.get(0)!)).toBe(false);
    b.put(ref(1, 'c'), 4);
    // Key group 1 left and came back: nothing to chain onto, so a full image.
    const back = await b.checkpointKeyGroups([0, 1]);
    expect(isChangesImage(back.get(1)!)).toBe(false);
  });

  it('materialises each key group on its turn, so the chain stays bounded and re-uploads are spread', async () => {
    const b = await backendOf(kind, 4);
    const kgs = [0, 1, 2, 3, 4, 5, 6, 7];
    for (const kg of kgs) for (let i = 0; i < 200; i++) b.put(ref(kg, `k${i}`), 'x'.repeat(20));
    await b.checkpointKeyGroups(kgs);
    const fullPerCheckpoint: number[] = [];
    for (let c = 1; c <= 8; c++) {
      for (const kg of kgs) b.put(ref(kg, `k${c}`), `v${c}`);
      const images = await b.checkpointKeyGroups(kgs);
      fullPerCheckpoint.push([...images.values()].filter((img) => !isChangesImage(img)).length);
    }
    // The first round only starts the chains; then two key groups (8 ÷ 4) take their turn per checkpoint.
    expect(fullPerCheckpoint).toEqual([0, 2, 2, 2, 2, 2, 2, 2]);
  });

  it('hands over on each turn exactly the image of the cut, also when it was prebuilt from the previous cut', async () => {
    const b = await backendOf(kind, 3);
    const kgs = [0, 1, 2, 3, 4, 5];
    for (const kg of kgs) for (let i = 0; i < 300; i++) b.put(ref(kg, `k${i}`), i);
    await b.checkpointKeyGroups(kgs);
    for (let c = 1; c <= 7; c++) {
      for (const kg of kgs) {
        b.put(ref(kg, `k${c}`), `v${c}`);
        b.delete(ref(kg, `k${c + 100}`));
        b.put(ref(kg, `new${c}`), c);
      }
      if (c === 4) await b.restoreKeyGroup(2, await b.snapshotKeyGroup(2)); // replaced: its prebuilt image is stale
      const images = await b.checkpointKeyGroups(kgs);
      for (const [kg, image] of images) {
        if (isChangesImage(image)) continue;
        expect(Buffer.from(image).equals(Buffer.from(await b.snapshotKeyGroup(kg)))).toBe(true);
      }
    }
  });

  it('after a restore, takes the full image the restored one plus the writes since make, then chains changes', async () => {
    const b = await backendOf(kind);
    const source = await backendOf(kind);
    for (let i = 0; i < 100; i++) source.put(ref(3, `k${i}`), i);
    await b.restoreKeyGroup(3, await source.snapshotKeyGroup(3));
    b.put(ref(3, 'k1'), 'changed');
    b.delete(ref(3, 'k2'));
    b.put(ref(3, 'zz'), 1);
    const first = (await b.checkpointKeyGroups([3])).get(3)!;
    expect(isChangesImage(first)).toBe(false);
    expect(Buffer.from(first).equals(Buffer.from(await b.snapshotKeyGroup(3)))).toBe(true);
    b.put(ref(3, 'k5'), 'again');
    expect(isChangesImage((await b.checkpointKeyGroups([3])).get(3)!)).toBe(true);
  });

  it('takes full images of everything when asked (a checkpoint whose changes were lost)', async () => {
    const b = await backendOf(kind);
    b.put(ref(0, 'a'), 1);
    await b.checkpointKeyGroups([0]);
    b.put(ref(0, 'a'), 2);
    b.requestFullCheckpoint();
    expect(isChangesImage((await b.checkpointKeyGroups([0])).get(0)!)).toBe(false);
    b.put(ref(0, 'a'), 3);
    expect(isChangesImage((await b.checkpointKeyGroups([0])).get(0)!)).toBe(true);
  });
});

describe('continuing a stored chain after a restore', () => {
  it('chains changes onto the first restore of the key groups it was told to continue, and only those', async () => {
    const b = await createStateBackend({ kind: 'memory', changelog: { continueFrom: [0] } });
    open.push(b);
    const source = await backendOf('memory');
    source.put(ref(0, 'a'), 1);
    source.put(ref(1, 'b'), 2);
    await b.restoreKeyGroup(0, await source.snapshotKeyGroup(0));
    await b.restoreKeyGroup(1, await source.snapshotKeyGroup(1));
    b.put(ref(0, 'a'), 10);
    b.put(ref(1, 'b'), 20);
    const images = await b.checkpointKeyGroups([0, 1]);
    expect(isChangesImage(images.get(0)!)).toBe(true);
    expect(isChangesImage(images.get(1)!)).toBe(false);
    // A second restore of key group 0 (a live move back in) is a replacement again.
    await b.restoreKeyGroup(0, await source.snapshotKeyGroup(0));
    expect(isChangesImage((await b.checkpointKeyGroups([0, 1])).get(0)!)).toBe(false);
  });
});

describe('key-group changes image', () => {
  it('round-trips and rejects corruption, another key group and unknown bytes', () => {
    const id = (s: string) => `\u0000\u0007${s}`;
    const image = writeKeyGroupChanges(7, new Map([[id('b'), Buffer.from('2')], [id('a'), null]]));
    expect(readKeyGroupChanges(image, 7).map((c) => [c.key.subarray(2).toString(), c.value?.toString() ?? null])).toEqual([
      ['a', null],
      ['b', '2'],
    ]);
    expect(() => readKeyGroupChanges(image, 8)).toThrow(StateImageError);
    const corrupt = Buffer.from(image);
    corrupt[14] ^= 1;
    expect(() => readKeyGroupChanges(corrupt, 7)).toThrow(/checksum/);
    expect(() => isChangesImage(Buffer.from('nope'))).toThrow(StateImageError);
  });
});

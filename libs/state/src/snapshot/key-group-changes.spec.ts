import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodeStateKey } from '../keys/key-layout';
import { composeKeyGroupImage, writeKeyGroupChanges } from './key-group-changes';
import { checkKeyGroupImage, imageEntryBatches, KeyGroupImageWriter, readKeyGroupImage } from './key-group-image';

const KG = 9;
const key = (user: number): Buffer => encodeStateKey({ keyGroup: KG, namespace: 'op/s', key: Buffer.from(user.toString(36)) });

/** A deterministic generator (the spec must fail the same way every time). */
function random(seed: number): () => number {
  let s = seed;
  return () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
}

function imageOf(entries: ReadonlyMap<string, Buffer>): Buffer {
  const writer = new KeyGroupImageWriter(KG, 16); // tiny initial buffer: growing is exercised
  for (const id of [...entries.keys()].sort()) writer.add(Buffer.from(id, 'latin1'), entries.get(id)!);
  return writer.finish();
}

describe('composeKeyGroupImage (merge of a full image and its changes)', () => {
  it.each([1, 2, 3, 4, 5])('equals applying every change in order to a map of the base (seed %i)', (seed) => {
    const next = random(seed);
    const state = new Map<string, Buffer>();
    for (let i = 0; i < 300; i++) if (next() < 0.5) state.set(key(i).toString('latin1'), Buffer.from(`base ${i}`));
    const base = seed === 5 ? null : imageOf(state);
    if (base === null) state.clear();
    const changes: Buffer[] = [];
    for (let round = 0; round < 4; round++) {
      const changed = new Map<string, Buffer | null>();
      // Keys below, inside and above the base's range; deletes of present and absent keys; re-puts of deleted ones.
      for (let n = 0; n < 60; n++) {
        const id = key(Math.floor(next() * 320)).toString('latin1');
        changed.set(id, next() < 0.3 ? null : Buffer.from(`round ${round} ${n}`));
      }
      for (const [id, value] of changed) {
        if (value) state.set(id, value);
        else state.delete(id);
      }
      changes.push(writeKeyGroupChanges(KG, changed));
    }
    const composed = composeKeyGroupImage(KG, base, changes);
    expect(composed.equals(imageOf(state))).toBe(true);
  });

  it('returns the base unchanged in content when there are no changes, and an empty image for nothing', () => {
    const base = imageOf(new Map([[key(1).toString('latin1'), Buffer.from('x')]]));
    expect(composeKeyGroupImage(KG, base, []).equals(base)).toBe(true);
    expect(readKeyGroupImage(composeKeyGroupImage(KG, null, []), KG)).toEqual([]);
  });
});

describe('imageEntryBatches', () => {
  it('hands over every entry once, in order, in batches of the size asked for', () => {
    const entries = new Map<string, Buffer>();
    for (let i = 0; i < 7; i++) entries.set(key(i).toString('latin1'), Buffer.from(`v${i}`));
    const view = checkKeyGroupImage(imageOf(entries), KG);
    const batches = [...imageEntryBatches(view, 3)];
    expect(batches.map((b) => b.length)).toEqual([3, 3, 1]);
    expect(batches.flat().map((e) => [e.key.toString('latin1'), e.value.toString()])).toEqual(
      [...entries].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, v]) => [id, v.toString()]),
    );
  });

  it('refuses an image whose lengths do not add up before handing over anything', () => {
    const image = imageOf(new Map([[key(1).toString('latin1'), Buffer.from('value')]]));
    const lying = Buffer.from(image);
    lying.writeUInt32BE(999, 12); // the key length, with a checksum that matches it
    lying.writeUInt32BE(crc32(lying.subarray(0, lying.length - 4)), lying.length - 4);
    expect(() => checkKeyGroupImage(lying, KG)).toThrow(/truncated/);
  });
});

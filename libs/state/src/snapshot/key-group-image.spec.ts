import { describe, expect, it } from 'vitest';
import { StateImageError } from '../errors';
import { encodeStateKey } from '../keys/key-layout';
import { KeyGroupImageWriter, readKeyGroupImage } from './key-group-image';

const key = (keyGroup: number, user: string): Buffer =>
  encodeStateKey({ keyGroup, namespace: 'op/s', key: Buffer.from(user) });

function image(keyGroup: number, entries: [string, string][]): Buffer {
  const writer = new KeyGroupImageWriter(keyGroup);
  for (const [user, value] of entries) writer.add(key(keyGroup, user), Buffer.from(value));
  return writer.finish();
}

describe('key-group snapshot image', () => {
  it('starts with magic, format version and key group, and round-trips its entries', () => {
    const bytes = image(42, [
      ['a', 'one'],
      ['', ''],
      ['c', 'three'],
    ]);
    expect(bytes.subarray(0, 8).toString('hex')).toBe(Buffer.from('WKGS').toString('hex') + '0001' + '002a');
    const entries = readKeyGroupImage(bytes, 42);
    expect(entries.map((e) => [e.key.toString('hex'), e.value.toString()])).toEqual([
      [key(42, 'a').toString('hex'), 'one'],
      [key(42, '').toString('hex'), ''],
      [key(42, 'c').toString('hex'), 'three'],
    ]);
  });

  it('reads an empty key group', () => {
    expect(readKeyGroupImage(image(0, []), 0)).toEqual([]);
  });

  it('rejects another key group, bad magic, a newer format, corruption and truncation', () => {
    const good = image(5, [['k', 'v']]);
    expect(() => readKeyGroupImage(good, 6)).toThrow(/key group 5, not 6/);
    const badMagic = Buffer.from(good);
    badMagic[0] = 0x58;
    expect(() => readKeyGroupImage(badMagic, 5)).toThrow(StateImageError);
    const newer = Buffer.from(good);
    newer.writeUInt16BE(2, 4);
    expect(() => readKeyGroupImage(newer, 5)).toThrow(/format 2/);
    const flipped = Buffer.from(good);
    flipped[flipped.length - 6] ^= 1;
    expect(() => readKeyGroupImage(flipped, 5)).toThrow(/checksum/);
    expect(() => readKeyGroupImage(good.subarray(0, 10), 5)).toThrow(StateImageError);
  });
});

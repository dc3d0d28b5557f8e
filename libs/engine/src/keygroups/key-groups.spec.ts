import { describe, expect, it } from 'vitest';
import { decodeKey, encodeKey, InvalidKeyError } from './key-serde';
import { hashKey, keyGroupOfKey } from './key-hash';
import { defaultOwnerOf, InvalidParallelismError, keyGroupFor, keyGroupRangeFor } from './key-groups';
import { murmur3 } from './murmur3';
import { RoutingError, RoutingTable } from './routing-table';

describe('murmur3', () => {
  it('matches the reference x86_32 vectors', () => {
    expect(murmur3(Buffer.from(''))).toBe(0);
    expect(murmur3(Buffer.from(''), 1)).toBe(0x514e28b7);
    expect(murmur3(Buffer.from('hello'))).toBe(0x248bfa47);
    expect(murmur3(Buffer.from('The quick brown fox jumps over the lazy dog'))).toBe(0x2e4ff723);
  });
});

describe('key groups', () => {
  it('hash the serialised key into [0, maxParallelism) and keep strings and numbers apart', () => {
    const a = keyGroupFor(encodeKey('1'), 128);
    const b = keyGroupFor(encodeKey(1), 128);
    expect(a).toBe(murmur3(encodeKey('1')) % 128);
    expect(b).toBe(murmur3(encodeKey(1)) % 128);
    expect(decodeKey(encodeKey('1'))).toBe('1');
    expect(decodeKey(encodeKey(1))).toBe(1);
  });

  it('split key groups into contiguous ranges that agree with the owner formula', () => {
    expect([0, 1, 2].map((i) => keyGroupRangeFor(i, 3, 10))).toEqual([
      { start: 0, end: 3 },
      { start: 4, end: 6 },
      { start: 7, end: 9 },
    ]);
    for (let kg = 0; kg < 10; kg++) {
      const owner = defaultOwnerOf(kg, 3, 10);
      const range = keyGroupRangeFor(owner, 3, 10);
      expect(kg >= range.start && kg <= range.end).toBe(true);
    }
    expect(() => keyGroupRangeFor(0, 11, 10)).toThrow(InvalidParallelismError);
  });
});

describe('RoutingTable', () => {
  it('starts from the default ranges and versions every change', () => {
    const t1 = RoutingTable.initial(2, 8);
    expect(t1.version).toBe(1);
    expect(t1.keyGroupsOf(0)).toEqual([0, 1, 2, 3]);
    const t2 = t1.withMoves([{ keyGroup: 1, toSubtask: 1 }]);
    expect(t2.version).toBe(2);
    expect(t2.ownerOf(1)).toBe(1);
    expect(t1.ownerOf(1)).toBe(0);
    expect(t2.keyGroupsOf(1)).toEqual([1, 4, 5, 6, 7]);
    expect(() => t2.withMoves([{ keyGroup: 8, toSubtask: 0 }])).toThrow(RoutingError);
    expect(() => t2.withMoves([{ keyGroup: 0, toSubtask: 2 }])).toThrow(RoutingError);
  });
});

describe('hashKey', () => {
  it('equals murmur3 of the serialised key for ASCII, non-ASCII, long, numeric and edge-case keys', () => {
    const keys = ['', 'a', 'user-123456', 'ünïcödé', '日本', '😀', 'x'.repeat(256), 'y'.repeat(257), '\u007f', 'abc\u0080', 'é', 0, -0, 1, 1.5, -1e300, 2 ** 53];
    // Every tail length and block count of the ASCII path, and a non-ASCII char in every position of a short key.
    for (let n = 0; n <= 13; n++) keys.push('k'.repeat(n), Array.from({ length: n }, (_, i) => String.fromCharCode(32 + ((i * 37) % 95))).join(''));
    for (let at = 0; at < 9; at++) keys.push(`${'a'.repeat(at)}ß${'b'.repeat(8 - at)}`);
    for (const key of keys) {
      expect(hashKey(key)).toBe(murmur3(encodeKey(key)));
      expect(keyGroupOfKey(key, 128)).toBe(keyGroupFor(encodeKey(key), 128));
    }
  });

  it('rejects what encodeKey rejects, with the same error', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, {} as unknown as string]) {
      expect(() => hashKey(bad)).toThrow(InvalidKeyError);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { InvalidStateRefError } from '../errors';
import {
  decodeStateKey,
  encodeStateKey,
  idToStoreKey,
  keyGroupOfId,
  keyGroupRange,
  namespaceRange,
  stateKeyId,
  userKeyOf,
} from './key-layout';

const inRange = (key: Buffer, range: { gte: Buffer; lt: Buffer }): boolean =>
  Buffer.compare(key, range.gte) >= 0 && Buffer.compare(key, range.lt) < 0;

describe('state key layout', () => {
  it('lays out key group (u16 BE), length-prefixed namespace, then the user key', () => {
    const key = encodeStateKey({ keyGroup: 0x0102, namespace: 'op/s', key: Buffer.from([9, 8]) });
    expect(key.toString('hex')).toBe('0102' + '0004' + Buffer.from('op/s').toString('hex') + '0908');
  });

  it('round-trips through decode, including utf-8 namespaces and empty keys', () => {
    const ref = { keyGroup: 32767, namespace: 'opérateur/état', key: new Uint8Array() };
    const decoded = decodeStateKey(encodeStateKey(ref));
    expect(decoded.keyGroup).toBe(32767);
    expect(decoded.namespace).toBe('opérateur/état');
    expect(decoded.key.length).toBe(0);
  });

  it('builds cache ids equal to the store key bytes, and reads the key group back from them', () => {
    const ref = { keyGroup: 300, namespace: 'a/b', key: Buffer.from([0, 255, 128]) };
    const id = stateKeyId(ref);
    expect(idToStoreKey(id).equals(encodeStateKey(ref))).toBe(true);
    expect(keyGroupOfId(id)).toBe(300);
  });

  it('accepts a plain Uint8Array view with an offset as the user key', () => {
    const backing = new Uint8Array([1, 2, 3, 4, 5]);
    const ref = { keyGroup: 1, namespace: 'n', key: backing.subarray(2, 4) };
    expect(userKeyOf(encodeStateKey(ref), 'n')).toEqual(Buffer.from([3, 4]));
    expect(stateKeyId(ref)).toBe(encodeStateKey(ref).toString('latin1'));
  });

  it('keeps each key group in its own contiguous range, with no overlap at the edges', () => {
    const edge = (keyGroup: number, key: number[]) =>
      encodeStateKey({ keyGroup, namespace: 'n', key: Buffer.from(key) });
    const range = keyGroupRange(7);
    expect(inRange(edge(7, []), range)).toBe(true);
    expect(inRange(edge(7, [255, 255, 255, 255]), range)).toBe(true);
    expect(inRange(edge(6, [255, 255]), range)).toBe(false);
    expect(inRange(edge(8, []), range)).toBe(false);
    expect(inRange(edge(0x7fff, [255]), keyGroupRange(0x7fff))).toBe(true);
  });

  it('keeps one namespace of one key group contiguous, apart from namespaces sharing a prefix', () => {
    const range = namespaceRange(3, 'op/count');
    expect(inRange(encodeStateKey({ keyGroup: 3, namespace: 'op/count', key: Buffer.from([255, 255]) }), range)).toBe(
      true,
    );
    expect(inRange(encodeStateKey({ keyGroup: 3, namespace: 'op/counts', key: Buffer.alloc(0) }), range)).toBe(false);
    expect(inRange(encodeStateKey({ keyGroup: 3, namespace: 'op/coun', key: Buffer.from('t') }), range)).toBe(false);
    expect(inRange(encodeStateKey({ keyGroup: 4, namespace: 'op/count', key: Buffer.alloc(0) }), range)).toBe(false);
  });

  it('rejects key groups outside [0, 32767] and over-long namespaces', () => {
    const key = Buffer.alloc(1);
    expect(() => encodeStateKey({ keyGroup: 32768, namespace: 'n', key })).toThrow(InvalidStateRefError);
    expect(() => stateKeyId({ keyGroup: -1, namespace: 'n', key })).toThrow(InvalidStateRefError);
    expect(() => keyGroupRange(1.5)).toThrow(InvalidStateRefError);
    expect(() => encodeStateKey({ keyGroup: 0, namespace: 'x'.repeat(70_000), key })).toThrow(InvalidStateRefError);
  });

  it('rejects truncated store keys', () => {
    expect(() => decodeStateKey(Buffer.from([0, 1, 0]))).toThrow(InvalidStateRefError);
    expect(() => decodeStateKey(Buffer.from([0, 1, 0, 9, 65]))).toThrow(InvalidStateRefError);
  });
});

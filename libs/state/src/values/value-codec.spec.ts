import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { StateValueFormatError } from '../errors';
import { decodeValue, encodeValue, isExpired, readExpiresAt } from './value-codec';

describe('stored value envelope', () => {
  it('round-trips Map, Set, Date, bigint, nested objects and binary', () => {
    const value = {
      counts: new Map<unknown, unknown>([
        ['a', 1],
        [2, { nested: [1, 2] }],
      ]),
      seen: new Set(['x', 'y']),
      at: new Date(1_700_000_000_123),
      total: 12_345_678_901_234_567_890n,
      small: 5n,
      bytes: new Uint8Array([1, 2, 3]),
      plain: { a: 1, b: 'two', c: null },
    };
    const decoded = decodeValue<typeof value>(encodeValue(value, undefined)).value;
    expect(decoded.counts).toBeInstanceOf(Map);
    expect([...decoded.counts]).toEqual([...value.counts]);
    expect(decoded.seen).toEqual(new Set(['x', 'y']));
    expect(decoded.at).toEqual(value.at);
    expect(decoded.total).toBe(value.total);
    expect(decoded.small).toBe(5n);
    expect(Buffer.from(decoded.bytes)).toEqual(Buffer.from([1, 2, 3]));
    expect(decoded.plain).toEqual({ a: 1, b: 'two', c: null });
    expect(decoded.plain).not.toBeInstanceOf(Map);
  });

  it('decodes values of many shapes in any order: no record structures are shared between values', () => {
    const first = encodeValue({ a: 1, b: 2 }, undefined);
    const second = encodeValue({ a: 3, b: 4 }, undefined);
    const third = encodeValue({ c: 'x' }, undefined);
    expect(decodeValue(third).value).toEqual({ c: 'x' });
    expect(decodeValue(second).value).toEqual({ a: 3, b: 4 });
    expect(decodeValue(first).value).toEqual({ a: 1, b: 2 });
    // A fresh decoder (another process) reads the payload too.
    expect(new Packr({ moreTypes: true }).unpack(second.subarray(1))).toEqual({ a: 3, b: 4 });
  });

  it('keeps the expiry in the header, readable without decoding the value', () => {
    const stored = encodeValue('v', 1_700_000_000_999);
    expect(readExpiresAt(stored)).toBe(1_700_000_000_999);
    expect(readExpiresAt(encodeValue('v', undefined))).toBeUndefined();
    expect(decodeValue(stored)).toEqual({ value: 'v', expiresAt: 1_700_000_000_999 });
  });

  it('treats a value as expired at and after its expiry', () => {
    expect(isExpired(100, 99)).toBe(false);
    expect(isExpired(100, 100)).toBe(true);
    expect(isExpired(undefined, Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  it('rejects unknown envelope tags', () => {
    expect(() => decodeValue(Buffer.from([0x7f, 0x01]))).toThrow(StateValueFormatError);
    expect(() => readExpiresAt(Buffer.from([0x02, 0x00]))).toThrow(StateValueFormatError);
  });
});

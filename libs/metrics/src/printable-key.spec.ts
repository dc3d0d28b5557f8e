import { describe, expect, it } from 'vitest';
import { printableKey } from './printable-key';

describe('printableKey', () => {
  it('keeps printable UTF-8 keys as text', () => {
    expect(printableKey(Buffer.from('card-4242 · Zürich'))).toBe('card-4242 · Zürich');
  });

  it('hex-encodes invalid UTF-8 and keys with control characters', () => {
    expect(printableKey(new Uint8Array([0xff, 0x00, 0x10]))).toBe('0xff0010');
    expect(printableKey(Buffer.from('a\nb'))).toBe('0x610a62');
  });

  it('reads only the view it is given', () => {
    const backing = Buffer.from('xxabcxx');
    expect(printableKey(backing.subarray(2, 5))).toBe('abc');
    expect(printableKey(new Uint8Array([0, 1, 2, 3]).subarray(1, 3))).toBe('0x0102');
  });
});

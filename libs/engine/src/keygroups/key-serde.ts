/**
 * Keys are serialised to bytes before hashing and storage. A tag byte keeps the string "1" and the number 1 apart.
 * The encoding is part of the state format: changing it would re-home every key.
 */
export type KeyValue = string | number;

export const STRING_TAG = 0x73; // 's'
export const NUMBER_TAG = 0x6e; // 'n'

export class InvalidKeyError extends Error {
  override readonly name = 'InvalidKeyError';
}

export function encodeKey(key: KeyValue): Uint8Array {
  if (typeof key === 'string') {
    // One buffer: measure, then write the UTF-8 behind the tag (was: encode, then copy into a second buffer).
    const out = Buffer.allocUnsafe(Buffer.byteLength(key, 'utf8') + 1);
    out[0] = STRING_TAG;
    out.write(key, 1, 'utf8');
    return out;
  }
  if (typeof key === 'number' && Number.isFinite(key)) {
    const out = Buffer.allocUnsafe(9);
    out[0] = NUMBER_TAG;
    out.writeDoubleBE(key, 1);
    return out;
  }
  throw new InvalidKeyError(`a key must be a string or a finite number, got ${typeof key === 'number' ? key : typeof key}`);
}

export function decodeKey(bytes: Uint8Array): KeyValue {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf[0] === STRING_TAG) return buf.toString('utf8', 1);
  if (buf[0] === NUMBER_TAG && buf.length === 9) return buf.readDoubleBE(1);
  throw new InvalidKeyError(`unknown key encoding tag ${buf[0]}`);
}

/** A map key for serialised keys: latin1 maps each byte to one char, so it is cheap and collision-free. */
export function keyId(bytes: Uint8Array): string {
  if (Buffer.isBuffer(bytes)) return bytes.toString('latin1');
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

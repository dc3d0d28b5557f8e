import { Packr } from 'msgpackr';
import { StateValueFormatError } from '../errors';

/**
 * Stored value envelope, format 1: [tag: u8][expiresAt: f64 BE, only when tag = WITH_EXPIRY][msgpack payload].
 *
 * The expiry sits in a fixed header so that scans (snapshot, entries) skip expired values without decoding them.
 * msgpackr runs in its default record mode with `moreTypes`: Map, Set, Date, bigint, typed arrays and plain objects
 * all round-trip as themselves. No record structures are shared between values (none are passed in), so every
 * value carries its own structure and decodes in any process, which snapshot images rely on.
 */

const PLAIN = 0x01;
const WITH_EXPIRY = 0x02;
const EXPIRY_BYTES = 8;

const packr = new Packr({ moreTypes: true });

export interface DecodedValue<T> {
  readonly value: T;
  readonly expiresAt: number | undefined;
}

export function encodeValue(value: unknown, expiresAt: number | undefined): Buffer {
  const payload = packr.pack(value);
  if (expiresAt === undefined) {
    const out = Buffer.allocUnsafe(1 + payload.length);
    out[0] = PLAIN;
    out.set(payload, 1);
    return out;
  }
  const out = Buffer.allocUnsafe(1 + EXPIRY_BYTES + payload.length);
  out[0] = WITH_EXPIRY;
  out.writeDoubleBE(expiresAt, 1);
  out.set(payload, 1 + EXPIRY_BYTES);
  return out;
}

/** The expiry of a stored value, read from its header only. */
export function readExpiresAt(stored: Uint8Array): number | undefined {
  const tag = stored[0];
  if (tag === PLAIN) return undefined;
  if (tag === WITH_EXPIRY && stored.length >= 1 + EXPIRY_BYTES) {
    return new DataView(stored.buffer, stored.byteOffset, stored.byteLength).getFloat64(1, false);
  }
  throw new StateValueFormatError(`unknown stored value tag ${tag} (length ${stored.length})`);
}

export function decodeValue<T>(stored: Uint8Array): DecodedValue<T> {
  const expiresAt = readExpiresAt(stored);
  const offset = expiresAt === undefined ? 1 : 1 + EXPIRY_BYTES;
  return { value: packr.unpack(stored.subarray(offset)) as T, expiresAt };
}

/** True when a value with this expiry is invisible at `now`. */
export function isExpired(expiresAt: number | undefined, now: number): boolean {
  return expiresAt !== undefined && now >= expiresAt;
}

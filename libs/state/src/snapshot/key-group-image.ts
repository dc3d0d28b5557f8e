import { crc32 } from 'node:zlib';
import { StateImageError } from '../errors';
import type { KeyGroup } from '../contract';

/**
 * Key-group snapshot image, format 1 (all integers big-endian):
 *
 *   magic "WKGS" | format u16 = 1 | key group u16 | entry count u32
 *   entry × count: key length u32 | key (store key without its 2-byte key group) | value length u32 | value
 *   crc32 u32 of everything before it
 *
 * Values are stored envelopes (values/value-codec.ts), expiry included, so an image carries everything a backend
 * needs and nothing backend-specific: any backend restores any backend's image. A reader rejects other magics,
 * newer formats, another key group and any checksum or length mismatch before it changes anything.
 */

const MAGIC = Buffer.from('WKGS', 'latin1');
const FORMAT_VERSION = 1;
const HEADER_BYTES = 4 + 2 + 2 + 4;
const CRC_BYTES = 4;
const KEY_GROUP_PREFIX_BYTES = 2;

export interface ImageEntry {
  /** The full store key, key group prefix included. */
  readonly key: Buffer;
  readonly value: Buffer;
}

/**
 * Builds one image from store entries of a single key group, in any order, straight into one growing buffer (no
 * per-entry allocations: a checkpoint images millions of entries).
 */
export class KeyGroupImageWriter {
  private buffer: Buffer;
  private offset = HEADER_BYTES;
  private count = 0;

  constructor(
    private readonly keyGroup: KeyGroup,
    initialBytes = 64 * 1024,
  ) {
    this.buffer = Buffer.allocUnsafe(Math.max(initialBytes, HEADER_BYTES + CRC_BYTES));
  }

  add(storeKey: Buffer, value: Buffer): void {
    const keyLength = storeKey.length - KEY_GROUP_PREFIX_BYTES;
    this.reserve(8 + keyLength + value.length);
    const out = this.buffer;
    let at = out.writeUInt32BE(keyLength, this.offset);
    at += storeKey.copy(out, at, KEY_GROUP_PREFIX_BYTES);
    at = out.writeUInt32BE(value.length, at);
    this.offset = at + value.copy(out, at);
    this.count++;
  }

  /** Appends encoded entries (`count` of them, each `key length | key | value length | value`) as they are. */
  addEncoded(encoded: Buffer, count: number): void {
    this.reserve(encoded.length);
    this.offset += encoded.copy(this.buffer, this.offset);
    this.count += count;
  }

  finish(): Buffer {
    this.reserve(CRC_BYTES);
    const image = this.buffer;
    MAGIC.copy(image, 0);
    image.writeUInt16BE(FORMAT_VERSION, 4);
    image.writeUInt16BE(this.keyGroup, 6);
    image.writeUInt32BE(this.count, 8);
    image.writeUInt32BE(crc32(image.subarray(0, this.offset)), this.offset);
    const length = this.offset + CRC_BYTES;
    // Images are kept until their checkpoint completes: do not keep up to twice their size alive.
    return image.length - length > length / 8 ? Buffer.from(image.subarray(0, length)) : image.subarray(0, length);
  }

  private reserve(bytes: number): void {
    if (this.offset + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.offset + bytes));
    this.buffer.copy(grown, 0, 0, this.offset);
    this.buffer = grown;
  }
}

/** A validated image: its bytes, entry count and where the entries end (the checksum follows). */
export interface KeyGroupImageView {
  readonly bytes: Buffer;
  readonly keyGroup: KeyGroup;
  readonly count: number;
  /** Offset of the first entry. */
  readonly start: number;
  /** Offset just past the last entry. */
  readonly end: number;
}

/**
 * Validates an image of `keyGroup` entirely (magic, format, key group, checksum, every length) without allocating
 * per entry, so a restore can refuse a corrupt image before it drops anything.
 */
export function checkKeyGroupImage(image: Uint8Array, keyGroup: KeyGroup): KeyGroupImageView {
  const bytes = Buffer.from(image.buffer, image.byteOffset, image.byteLength);
  if (bytes.length < HEADER_BYTES + CRC_BYTES || !bytes.subarray(0, 4).equals(MAGIC)) {
    throw new StateImageError('not a Weir key-group snapshot image (bad magic or too short)');
  }
  const format = bytes.readUInt16BE(4);
  if (format !== FORMAT_VERSION) {
    throw new StateImageError(`key-group image format ${format} is not supported (this version reads ${FORMAT_VERSION})`);
  }
  const imageKeyGroup = bytes.readUInt16BE(6);
  if (imageKeyGroup !== keyGroup) {
    throw new StateImageError(`image holds key group ${imageKeyGroup}, not ${keyGroup}`);
  }
  const end = bytes.length - CRC_BYTES;
  if (crc32(bytes.subarray(0, end)) !== bytes.readUInt32BE(end)) {
    throw new StateImageError(`key-group ${keyGroup} image checksum mismatch`);
  }
  const count = bytes.readUInt32BE(8);
  let offset = HEADER_BYTES;
  for (let i = 0; i < count * 2; i++) {
    if (offset + 4 > end) throw new StateImageError(`key-group ${keyGroup} image is truncated`);
    offset += 4 + bytes.readUInt32BE(offset);
    if (offset > end) throw new StateImageError(`key-group ${keyGroup} image is truncated`);
  }
  if (offset !== end) throw new StateImageError(`key-group ${keyGroup} image has trailing bytes`);
  return { bytes, keyGroup, count, start: HEADER_BYTES, end };
}

/**
 * The entries of a checked image in batches of at most `max`: values are views into the image, and the batch's
 * store keys (key group prefix put back) share one allocation.
 */
export function* imageEntryBatches(view: KeyGroupImageView, max: number): Generator<ImageEntry[]> {
  const { bytes } = view;
  let offset = view.start;
  for (let first = 0; first < view.count; first += max) {
    const n = Math.min(max, view.count - first);
    let keyBytes = 0;
    for (let i = 0, at = offset; i < n; i++) {
      const keyLength = bytes.readUInt32BE(at);
      keyBytes += KEY_GROUP_PREFIX_BYTES + keyLength;
      at += 8 + keyLength + bytes.readUInt32BE(at + 4 + keyLength);
    }
    const keys = Buffer.allocUnsafe(keyBytes);
    const batch: ImageEntry[] = new Array(n);
    let keyAt = 0;
    for (let i = 0; i < n; i++) {
      const keyLength = bytes.readUInt32BE(offset);
      keys.writeUInt16BE(view.keyGroup, keyAt);
      bytes.copy(keys, keyAt + KEY_GROUP_PREFIX_BYTES, offset + 4, offset + 4 + keyLength);
      const key = keys.subarray(keyAt, keyAt + KEY_GROUP_PREFIX_BYTES + keyLength);
      keyAt += KEY_GROUP_PREFIX_BYTES + keyLength;
      const valueAt = offset + 4 + keyLength;
      const valueEnd = valueAt + 4 + bytes.readUInt32BE(valueAt);
      batch[i] = { key, value: bytes.subarray(valueAt + 4, valueEnd) };
      offset = valueEnd;
    }
    yield batch;
  }
}

/** Validates an image of `keyGroup` entirely and returns its entries (store keys with the key group prefix). */
export function readKeyGroupImage(image: Uint8Array, keyGroup: KeyGroup): ImageEntry[] {
  const view = checkKeyGroupImage(image, keyGroup);
  return view.count === 0 ? [] : [...imageEntryBatches(view, view.count)].flat();
}

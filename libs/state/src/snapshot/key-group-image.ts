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

/** Builds one image from store entries of a single key group, in any order. */
export class KeyGroupImageWriter {
  private readonly chunks: Buffer[] = [];
  private count = 0;
  private bytes = HEADER_BYTES;

  constructor(private readonly keyGroup: KeyGroup) {}

  add(storeKey: Buffer, value: Buffer): void {
    const key = storeKey.subarray(KEY_GROUP_PREFIX_BYTES);
    const keyLength = Buffer.allocUnsafe(4);
    keyLength.writeUInt32BE(key.length, 0);
    const valueLength = Buffer.allocUnsafe(4);
    valueLength.writeUInt32BE(value.length, 0);
    this.chunks.push(keyLength, key, valueLength, value);
    this.count++;
    this.bytes += 8 + key.length + value.length;
  }

  finish(): Buffer {
    const header = Buffer.allocUnsafe(HEADER_BYTES);
    MAGIC.copy(header, 0);
    header.writeUInt16BE(FORMAT_VERSION, 4);
    header.writeUInt16BE(this.keyGroup, 6);
    header.writeUInt32BE(this.count, 8);
    const image = Buffer.allocUnsafe(this.bytes + CRC_BYTES);
    let offset = header.copy(image, 0);
    for (const chunk of this.chunks) offset += chunk.copy(image, offset);
    image.writeUInt32BE(crc32(image.subarray(0, offset)), offset);
    return image;
  }
}

/** Validates an image of `keyGroup` entirely and returns its entries (store keys with the key group prefix). */
export function readKeyGroupImage(image: Uint8Array, keyGroup: KeyGroup): ImageEntry[] {
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
  const bodyEnd = bytes.length - CRC_BYTES;
  if (crc32(bytes.subarray(0, bodyEnd)) !== bytes.readUInt32BE(bodyEnd)) {
    throw new StateImageError(`key-group ${keyGroup} image checksum mismatch`);
  }
  const count = bytes.readUInt32BE(8);
  const prefix = Buffer.allocUnsafe(KEY_GROUP_PREFIX_BYTES);
  prefix.writeUInt16BE(keyGroup, 0);
  const entries: ImageEntry[] = [];
  let offset = HEADER_BYTES;
  const field = (): Buffer => {
    if (offset + 4 > bodyEnd) throw new StateImageError(`key-group ${keyGroup} image is truncated`);
    const length = bytes.readUInt32BE(offset);
    const end = offset + 4 + length;
    if (end > bodyEnd) throw new StateImageError(`key-group ${keyGroup} image is truncated`);
    const out = bytes.subarray(offset + 4, end);
    offset = end;
    return out;
  };
  for (let i = 0; i < count; i++) {
    const key = Buffer.concat([prefix, field()]);
    entries.push({ key, value: field() });
  }
  if (offset !== bodyEnd) throw new StateImageError(`key-group ${keyGroup} image has trailing bytes`);
  return entries;
}

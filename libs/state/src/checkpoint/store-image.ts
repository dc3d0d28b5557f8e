import { crc32 } from 'node:zlib';
import { StateCheckpointError } from '../errors';
import type { StoreEntry } from '../store/ordered-store';

/**
 * Whole-store image, format 1: the memory backend's checkpoint (one file holding every key group). All integers
 * big-endian:
 *
 *   magic "WSTI" | format u16 = 1 | entry count u32
 *   entry × count: key length u32 | store key (key group included) | value length u32 | value envelope
 *   crc32 u32 of everything before it
 *
 * Entries are in key order, so key groups are contiguous and an image of the same state is the same bytes.
 */
const MAGIC = Buffer.from('WSTI', 'latin1');
const FORMAT_VERSION = 1;
const HEADER_BYTES = 4 + 2 + 4;
const CRC_BYTES = 4;

export const STORE_IMAGE_FILE = 'state.wsti';

export function writeStoreImage(entries: readonly StoreEntry[]): Buffer {
  let bytes = HEADER_BYTES + CRC_BYTES;
  for (const { key, value } of entries) bytes += 8 + key.length + value.length;
  const image = Buffer.allocUnsafe(bytes);
  MAGIC.copy(image, 0);
  image.writeUInt16BE(FORMAT_VERSION, 4);
  image.writeUInt32BE(entries.length, 6);
  let offset = HEADER_BYTES;
  for (const { key, value } of entries) {
    offset = image.writeUInt32BE(key.length, offset);
    offset += key.copy(image, offset);
    offset = image.writeUInt32BE(value.length, offset);
    offset += value.copy(image, offset);
  }
  image.writeUInt32BE(crc32(image.subarray(0, offset)), offset);
  return image;
}

/** Validates the whole image (magic, format, checksum, lengths) and returns its entries. */
export function readStoreImage(image: Buffer, source: string): StoreEntry[] {
  if (image.length < HEADER_BYTES + CRC_BYTES || !image.subarray(0, 4).equals(MAGIC)) {
    throw new StateCheckpointError(`${source} is not a Weir state image (bad magic or too short)`);
  }
  const format = image.readUInt16BE(4);
  if (format !== FORMAT_VERSION) {
    throw new StateCheckpointError(`${source}: state image format ${format} is not supported (this version reads ${FORMAT_VERSION})`);
  }
  const bodyEnd = image.length - CRC_BYTES;
  if (crc32(image.subarray(0, bodyEnd)) !== image.readUInt32BE(bodyEnd)) {
    throw new StateCheckpointError(`${source}: state image checksum mismatch`);
  }
  const count = image.readUInt32BE(6);
  const entries: StoreEntry[] = new Array(count);
  let offset = HEADER_BYTES;
  const field = (): Buffer => {
    if (offset + 4 > bodyEnd) throw new StateCheckpointError(`${source}: state image is truncated`);
    const end = offset + 4 + image.readUInt32BE(offset);
    if (end > bodyEnd) throw new StateCheckpointError(`${source}: state image is truncated`);
    const out = image.subarray(offset + 4, end);
    offset = end;
    return out;
  };
  for (let i = 0; i < count; i++) entries[i] = { key: field(), value: field() };
  if (offset !== bodyEnd) throw new StateCheckpointError(`${source}: state image has trailing bytes`);
  return entries;
}

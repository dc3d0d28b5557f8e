import { crc32 } from 'node:zlib';
import { StateImageError } from '../errors';
import type { KeyGroup } from '../contract';
import { checkKeyGroupImage, KeyGroupImageWriter } from './key-group-image';

/**
 * Key-group changes image, format 1: what a key group's state changed since an earlier checkpoint (the changelog
 * half of incremental checkpoints; the other half is a full image, key-group-image.ts). All integers big-endian:
 *
 *   magic "WKGC" | format u16 = 1 | key group u16 | entry count u32
 *   entry × count: key length u32 | key (store key without its key group) | op u8 (1 put, 0 delete)
 *                  | put only: value length u32 | value envelope
 *   crc32 u32 of everything before it
 *
 * One entry per key (the last write since the earlier checkpoint wins), in key order. A changes image means
 * nothing alone: it applies on top of the image (full, or full plus earlier changes) it follows.
 */

const MAGIC = Buffer.from('WKGC', 'latin1');
const FULL_MAGIC = Buffer.from('WKGS', 'latin1');
const FORMAT_VERSION = 1;
const HEADER_BYTES = 4 + 2 + 2 + 4;
const CRC_BYTES = 4;
const KEY_GROUP_PREFIX_BYTES = 2;

/** One change: the full store key (key group prefix included) and its new value envelope, or null for a delete. */
export interface KeyGroupChange {
  readonly key: Buffer;
  readonly value: Buffer | null;
}

/** True for a changes image, false for a full image (format 1 "WKGS"); anything else is a StateImageError. */
export function isChangesImage(image: Uint8Array): boolean {
  const magic = Buffer.from(image.buffer, image.byteOffset, Math.min(4, image.byteLength));
  if (magic.equals(MAGIC)) return true;
  if (magic.equals(FULL_MAGIC)) return false;
  throw new StateImageError('neither a key-group image nor a key-group changes image (bad magic)');
}

/** Encodes the changes of one key group; `changes` is keyed by cache id (latin1 store key), in any order. */
export function writeKeyGroupChanges(keyGroup: KeyGroup, changes: ReadonlyMap<string, Buffer | null>): Buffer {
  const ids = [...changes.keys()].sort();
  let bytes = HEADER_BYTES + CRC_BYTES;
  for (const id of ids) {
    const value = changes.get(id)!;
    bytes += 4 + id.length - KEY_GROUP_PREFIX_BYTES + 1 + (value ? 4 + value.length : 0);
  }
  const out = Buffer.allocUnsafe(bytes);
  MAGIC.copy(out, 0);
  out.writeUInt16BE(FORMAT_VERSION, 4);
  out.writeUInt16BE(keyGroup, 6);
  out.writeUInt32BE(ids.length, 8);
  let offset = HEADER_BYTES;
  for (const id of ids) {
    const value = changes.get(id)!;
    const keyLength = id.length - KEY_GROUP_PREFIX_BYTES;
    out.writeUInt32BE(keyLength, offset);
    out.write(id.slice(KEY_GROUP_PREFIX_BYTES), offset + 4, keyLength, 'latin1');
    offset += 4 + keyLength;
    out.writeUInt8(value ? 1 : 0, offset++);
    if (value) {
      out.writeUInt32BE(value.length, offset);
      offset += 4 + value.copy(out, offset + 4);
    }
  }
  out.writeUInt32BE(crc32(out.subarray(0, offset)), offset);
  return out;
}

/** Validates a changes image of `keyGroup` entirely and returns its changes (store keys with the key group prefix). */
export function readKeyGroupChanges(image: Uint8Array, keyGroup: KeyGroup): KeyGroupChange[] {
  const bytes = Buffer.from(image.buffer, image.byteOffset, image.byteLength);
  if (bytes.length < HEADER_BYTES + CRC_BYTES || !bytes.subarray(0, 4).equals(MAGIC)) {
    throw new StateImageError('not a Weir key-group changes image (bad magic or too short)');
  }
  const format = bytes.readUInt16BE(4);
  if (format !== FORMAT_VERSION) {
    throw new StateImageError(`key-group changes format ${format} is not supported (this version reads ${FORMAT_VERSION})`);
  }
  if (bytes.readUInt16BE(6) !== keyGroup) {
    throw new StateImageError(`changes image holds key group ${bytes.readUInt16BE(6)}, not ${keyGroup}`);
  }
  const bodyEnd = bytes.length - CRC_BYTES;
  if (crc32(bytes.subarray(0, bodyEnd)) !== bytes.readUInt32BE(bodyEnd)) {
    throw new StateImageError(`key-group ${keyGroup} changes checksum mismatch`);
  }
  const truncated = () => new StateImageError(`key-group ${keyGroup} changes image is truncated`);
  const count = bytes.readUInt32BE(8);
  const prefix = Buffer.allocUnsafe(KEY_GROUP_PREFIX_BYTES);
  prefix.writeUInt16BE(keyGroup, 0);
  const out: KeyGroupChange[] = [];
  let offset = HEADER_BYTES;
  const field = (): Buffer => {
    if (offset + 4 > bodyEnd) throw truncated();
    const end = offset + 4 + bytes.readUInt32BE(offset);
    if (end > bodyEnd) throw truncated();
    const field = bytes.subarray(offset + 4, end);
    offset = end;
    return field;
  };
  for (let i = 0; i < count; i++) {
    const key = Buffer.concat([prefix, field()]);
    if (offset >= bodyEnd) throw truncated();
    const op = bytes.readUInt8(offset++);
    if (op > 1) throw new StateImageError(`key-group ${keyGroup} changes image has unknown op ${op}`);
    out.push({ key, value: op === 1 ? field() : null });
  }
  if (offset !== bodyEnd) throw new StateImageError(`key-group ${keyGroup} changes image has trailing bytes`);
  return out;
}

/**
 * A full image of `keyGroup`: `base` (a full image, or null for an empty key group) with `changes` applied in
 * order. This is how a restore turns a checkpoint's chain back into what snapshotKeyGroup would have returned.
 *
 * A merge, not a rebuild: the changes (a small share of the keys) are folded and sorted, then the base image is
 * walked once in its key order; runs of base entries no change touches are copied as one block each.
 */
export function composeKeyGroupImage(keyGroup: KeyGroup, base: Uint8Array | null, changes: readonly Uint8Array[]): Buffer {
  const folded = new Map<string, KeyGroupChange>();
  let changeBytes = 0;
  for (const image of changes) {
    changeBytes += image.byteLength;
    for (const change of readKeyGroupChanges(image, keyGroup)) folded.set(change.key.toString('latin1'), change);
  }
  // Cache ids are latin1 strings, one char per byte, so their sort order is the keys' byte order.
  const ordered = [...folded.keys()].sort().map((id) => folded.get(id)!);
  const writer = new KeyGroupImageWriter(keyGroup, (base?.byteLength ?? 0) + changeBytes + 64);
  let next = 0;
  const put = (change: KeyGroupChange): void => {
    if (change.value) writer.add(change.key, change.value);
  };
  if (base) {
    const { bytes, start, end } = checkKeyGroupImage(base, keyGroup);
    let runStart = start;
    let runCount = 0;
    const flushRun = (runEnd: number): void => {
      if (runCount > 0) writer.addEncoded(bytes.subarray(runStart, runEnd), runCount);
      runCount = 0;
    };
    for (let offset = start; offset < end; ) {
      const keyStart = offset + 4;
      const keyEnd = keyStart + bytes.readUInt32BE(offset);
      const entryEnd = keyEnd + 4 + bytes.readUInt32BE(keyEnd);
      let order = 1;
      while (next < ordered.length) {
        order = ordered[next].key.compare(bytes, keyStart, keyEnd, KEY_GROUP_PREFIX_BYTES);
        if (order >= 0) break;
        flushRun(offset);
        put(ordered[next++]);
        runStart = offset;
      }
      if (order === 0) {
        flushRun(offset);
        put(ordered[next++]);
        runStart = entryEnd;
      } else {
        runCount++;
      }
      offset = entryEnd;
    }
    flushRun(end);
  }
  while (next < ordered.length) put(ordered[next++]);
  return writer.finish();
}

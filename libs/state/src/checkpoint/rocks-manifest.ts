/**
 * Reads the set of live table files out of a RocksDB MANIFEST, so a checkpoint can hard-link exactly those files
 * without pausing background work (PauseBackgroundWork waits for a running compaction, which held the engine's
 * state queue for seconds). Only what is needed is decoded, and anything not understood makes the reader give up
 * (null), in which case the caller falls back to the suspend path. The MANIFEST is RocksDB's log format
 * (db/log_format.h) holding VersionEdit records (db/version_edit.h).
 */

const BLOCK_SIZE = 32 * 1024;
const HEADER_SIZE = 7;
const RECYCLABLE_HEADER_SIZE = 11;

enum RecordType {
  Full = 1,
  First = 2,
  Middle = 3,
  Last = 4,
  RecyclableFull = 5,
  RecyclableLast = 8,
}

enum Tag {
  Comparator = 1,
  LogNumber = 2,
  NextFileNumber = 3,
  LastSequence = 4,
  CompactCursor = 5,
  DeletedFile = 6,
  PrevLogNumber = 9,
  MinLogNumberToKeep = 10,
  NewFile4 = 103,
  ColumnFamily = 200,
  ColumnFamilyAdd = 201,
  ColumnFamilyDrop = 202,
  MaxColumnFamily = 203,
  InAtomicGroup = 300,
  SafeIgnoreMask = 1 << 13,
}

const CUSTOM_TERMINATE = 1;
const CUSTOM_PATH_ID = 65;

export interface LiveTableFile {
  readonly number: number;
  readonly size: number;
}

export interface ManifestState {
  /** Live table files of every column family. */
  readonly tables: readonly LiveTableFile[];
  /** Bytes of the MANIFEST up to the end of its last complete record: what a copy must hold. */
  readonly completeBytes: number;
}

/** The live table files a MANIFEST describes, or null when it holds anything this reader does not understand. */
export function readManifest(bytes: Buffer): ManifestState | null {
  const records = readRecords(bytes);
  // A MANIFEST always starts with a complete snapshot record: none at all means this is not one.
  if (records === null || records.records.length === 0) return null;
  const live = new Map<number, { cf: number; size: number }>();
  for (const record of records.records) {
    if (!applyEdit(record, live)) return null;
  }
  return {
    tables: [...live].map(([number, { size }]) => ({ number, size })).sort((a, b) => a.number - b.number),
    completeBytes: records.completeBytes,
  };
}

export function tableFileName(number: number): string {
  return `${String(number).padStart(6, '0')}.sst`;
}

function readRecords(bytes: Buffer): { records: Buffer[]; completeBytes: number } | null {
  const records: Buffer[] = [];
  let fragments: Buffer[] | null = null;
  let pos = 0;
  let completeBytes = 0;
  while (pos < bytes.length) {
    const leftInBlock = BLOCK_SIZE - (pos % BLOCK_SIZE);
    if (leftInBlock < HEADER_SIZE) {
      pos += leftInBlock; // block trailer: zero padding
      continue;
    }
    if (pos + HEADER_SIZE > bytes.length) break; // a header still being written
    const length = bytes.readUInt16LE(pos + 4);
    const type = bytes[pos + 6];
    if (type === 0 && length === 0) break; // preallocated, never written
    const header = type >= RecordType.RecyclableFull && type <= RecordType.RecyclableLast ? RECYCLABLE_HEADER_SIZE : HEADER_SIZE;
    if (pos + header + length > bytes.length) break; // a record still being written
    const payload = bytes.subarray(pos + header, pos + header + length);
    pos += header + length;
    switch (type > RecordType.Last ? type - 4 : type) {
      case RecordType.Full:
        if (fragments !== null) return null;
        records.push(payload);
        completeBytes = pos;
        break;
      case RecordType.First:
        if (fragments !== null) return null;
        fragments = [payload];
        break;
      case RecordType.Middle:
        if (fragments === null) return null;
        fragments.push(payload);
        break;
      case RecordType.Last:
        if (fragments === null) return null;
        fragments.push(payload);
        records.push(Buffer.concat(fragments));
        fragments = null;
        completeBytes = pos;
        break;
      default:
        return null;
    }
  }
  return { records, completeBytes };
}

/** Applies one VersionEdit to the live set; false when the edit holds something unknown. */
function applyEdit(edit: Buffer, live: Map<number, { cf: number; size: number }>): boolean {
  const reader = new Reader(edit);
  const added: LiveTableFile[] = [];
  const deleted: number[] = [];
  let cf = 0;
  let dropColumnFamily = false;
  while (!reader.done()) {
    const tag = reader.varint();
    if (tag === null) return false;
    switch (tag) {
      case Tag.Comparator:
      case Tag.ColumnFamilyAdd:
        if (reader.slice() === null) return false;
        break;
      case Tag.LogNumber:
      case Tag.PrevLogNumber:
      case Tag.NextFileNumber:
      case Tag.LastSequence:
      case Tag.MinLogNumberToKeep:
      case Tag.MaxColumnFamily:
      case Tag.InAtomicGroup:
        if (reader.varint() === null) return false;
        break;
      case Tag.CompactCursor:
        if (reader.varint() === null || reader.slice() === null) return false;
        break;
      case Tag.DeletedFile: {
        const level = reader.varint();
        const number = reader.varint();
        if (level === null || number === null) return false;
        deleted.push(number);
        break;
      }
      case Tag.NewFile4: {
        const file = readNewFile4(reader);
        if (file === null) return false;
        added.push(file);
        break;
      }
      case Tag.ColumnFamily: {
        const id = reader.varint();
        if (id === null) return false;
        cf = id;
        break;
      }
      case Tag.ColumnFamilyDrop:
        dropColumnFamily = true;
        break;
      default:
        // Tags from newer RocksDB versions marked safe to ignore are length-prefixed; anything else is not ours.
        if ((tag & Tag.SafeIgnoreMask) === 0 || reader.slice() === null) return false;
    }
  }
  for (const number of deleted) live.delete(number);
  for (const file of added) live.set(file.number, { cf, size: file.size });
  if (dropColumnFamily) for (const [number, entry] of live) if (entry.cf === cf) live.delete(number);
  return true;
}

function readNewFile4(reader: Reader): LiveTableFile | null {
  const level = reader.varint();
  const number = reader.varint();
  const size = reader.varint();
  if (level === null || number === null || size === null) return null;
  if (reader.slice() === null || reader.slice() === null) return null; // smallest, largest keys
  if (reader.varint() === null || reader.varint() === null) return null; // smallest, largest seqno
  for (;;) {
    const custom = reader.varint();
    if (custom === null) return null;
    if (custom === CUSTOM_TERMINATE) break;
    const field = reader.slice();
    if (field === null) return null;
    // Files on another db_path live elsewhere: not in the directory a checkpoint links from.
    if (custom === CUSTOM_PATH_ID && field[0] !== 0) return null;
  }
  return { number, size };
}

class Reader {
  private pos = 0;
  constructor(private readonly bytes: Buffer) {}

  done(): boolean {
    return this.pos >= this.bytes.length;
  }

  /** A varint up to 64 bits; values above 2^53 lose precision, which only skipped fields (sequence numbers) reach. */
  varint(): number | null {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.bytes.length) return null;
      const byte = this.bytes[this.pos++];
      result += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return result;
      scale *= 128;
    }
    return null;
  }

  slice(): Buffer | null {
    const length = this.varint();
    if (length === null || this.pos + length > this.bytes.length) return null;
    const out = this.bytes.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }
}

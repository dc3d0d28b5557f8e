import { InvalidStateRefError } from '../errors';
import type { KeyGroup, StateNamespace, StateRef } from '../contract';

/**
 * Store key layout: [key group: u16 BE][namespace length: u16 BE][namespace: utf-8][user key bytes].
 *
 * The key group leads so that one key group is one contiguous key range (snapshot, restore and drop are range
 * operations), and the length-prefixed namespace follows so that one (key group, namespace) pair is a contiguous
 * sub-range too (entries()). The namespace is spelled out rather than mapped to an id: keys and snapshot images
 * stay self-describing with no dictionary to persist, and the LSM's block prefix compression absorbs the repetition.
 *
 * Cache ids are the same bytes as a latin1 string (one char per byte), which orders exactly like the bytes.
 */

/** The contract allows maxParallelism ≤ 32768, so key groups fit 15 bits and every range prefix has a successor. */
export const MAX_KEY_GROUP = 0x7fff;
const MAX_NAMESPACE_BYTES = 0xffff;
const KEY_GROUP_BYTES = 2;
const NAMESPACE_LENGTH_BYTES = 2;

export interface KeyRange {
  /** Inclusive lower bound. */
  readonly gte: Buffer;
  /** Exclusive upper bound. */
  readonly lt: Buffer;
}

export interface DecodedStateKey {
  readonly keyGroup: KeyGroup;
  readonly namespace: StateNamespace;
  readonly key: Buffer;
}

/** Namespace prefixes are computed once per namespace: engines use a handful of them, millions of times. */
const namespacePrefixes = new Map<StateNamespace, { bytes: Buffer; latin1: string }>();

function namespacePrefix(namespace: StateNamespace): { bytes: Buffer; latin1: string } {
  let prefix = namespacePrefixes.get(namespace);
  if (prefix === undefined) {
    const utf8 = Buffer.from(namespace, 'utf8');
    if (utf8.length > MAX_NAMESPACE_BYTES) {
      throw new InvalidStateRefError(`state namespace is ${utf8.length} bytes; at most ${MAX_NAMESPACE_BYTES}`);
    }
    const bytes = Buffer.allocUnsafe(NAMESPACE_LENGTH_BYTES + utf8.length);
    bytes.writeUInt16BE(utf8.length, 0);
    utf8.copy(bytes, NAMESPACE_LENGTH_BYTES);
    prefix = { bytes, latin1: bytes.toString('latin1') };
    namespacePrefixes.set(namespace, prefix);
  }
  return prefix;
}

function checkKeyGroup(keyGroup: KeyGroup): void {
  if (!Number.isInteger(keyGroup) || keyGroup < 0 || keyGroup > MAX_KEY_GROUP) {
    throw new InvalidStateRefError(`key group ${keyGroup} is not an integer in [0, ${MAX_KEY_GROUP}]`);
  }
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The store key of one state value. */
export function encodeStateKey(ref: StateRef): Buffer {
  checkKeyGroup(ref.keyGroup);
  const prefix = namespacePrefix(ref.namespace).bytes;
  const out = Buffer.allocUnsafe(KEY_GROUP_BYTES + prefix.length + ref.key.byteLength);
  out.writeUInt16BE(ref.keyGroup, 0);
  prefix.copy(out, KEY_GROUP_BYTES);
  out.set(ref.key, KEY_GROUP_BYTES + prefix.length);
  return out;
}

/**
 * A StateRef that remembers its cache id. A caller that addresses one value many times (the engine: a key's prefetch,
 * then every read and write of its records in a batch) thus builds the id string once, and the cache's Map hashes
 * that one string once, instead of building and hashing a fresh string per access.
 */
export class CachedStateRef implements StateRef {
  private cachedId: string | undefined = undefined;

  constructor(
    readonly keyGroup: KeyGroup,
    readonly namespace: StateNamespace,
    readonly key: Uint8Array,
  ) {}

  get id(): string {
    return (this.cachedId ??= buildStateKeyId(this));
  }
}

/** The cache id of one state value: the store key as a latin1 string, built without allocating the key buffer. */
export function stateKeyId(ref: StateRef): string {
  return ref instanceof CachedStateRef ? ref.id : buildStateKeyId(ref);
}

function buildStateKeyId(ref: StateRef): string {
  checkKeyGroup(ref.keyGroup);
  return (
    String.fromCharCode(ref.keyGroup >>> 8, ref.keyGroup & 0xff) +
    namespacePrefix(ref.namespace).latin1 +
    latin1(ref.key)
  );
}

/** Short keys (the usual case) convert faster in JS than through Buffer's native latin1 decoder. */
function latin1(bytes: Uint8Array): string {
  return bytes.length <= 64
    ? String.fromCharCode.apply(null, bytes as unknown as number[])
    : asBuffer(bytes).toString('latin1');
}

/** The key group a cache id belongs to (its first two chars). */
export function keyGroupOfId(id: string): KeyGroup {
  return (id.charCodeAt(0) << 8) | id.charCodeAt(1);
}

export function idToStoreKey(id: string): Buffer {
  return Buffer.from(id, 'latin1');
}

export function decodeStateKey(storeKey: Uint8Array): DecodedStateKey {
  const bytes = asBuffer(storeKey);
  if (bytes.length < KEY_GROUP_BYTES + NAMESPACE_LENGTH_BYTES) {
    throw new InvalidStateRefError(`store key of ${bytes.length} bytes is too short`);
  }
  const keyGroup = bytes.readUInt16BE(0);
  const namespaceLength = bytes.readUInt16BE(KEY_GROUP_BYTES);
  const namespaceStart = KEY_GROUP_BYTES + NAMESPACE_LENGTH_BYTES;
  const keyStart = namespaceStart + namespaceLength;
  if (keyStart > bytes.length) {
    throw new InvalidStateRefError(`store key's namespace length ${namespaceLength} overruns the key`);
  }
  return {
    keyGroup,
    namespace: bytes.toString('utf8', namespaceStart, keyStart),
    key: bytes.subarray(keyStart),
  };
}

/** The user key part of a store key whose namespace is known (avoids decoding the namespace again). */
export function userKeyOf(storeKey: Uint8Array, namespace: StateNamespace): Buffer {
  return asBuffer(storeKey).subarray(KEY_GROUP_BYTES + namespacePrefix(namespace).bytes.length);
}

/** Every key of one key group, and nothing else. */
export function keyGroupRange(keyGroup: KeyGroup): KeyRange {
  checkKeyGroup(keyGroup);
  const gte = Buffer.allocUnsafe(KEY_GROUP_BYTES);
  gte.writeUInt16BE(keyGroup, 0);
  return { gte, lt: prefixSuccessor(gte) };
}

/** Every key of key groups `start..end` (inclusive): contiguous, because the key group leads. */
export function keyGroupsRange(range: { readonly start: KeyGroup; readonly end: KeyGroup }): KeyRange {
  checkKeyGroup(range.start);
  checkKeyGroup(range.end);
  if (range.end < range.start) throw new InvalidStateRefError(`key group range ${range.start}..${range.end} is empty`);
  return { gte: keyGroupRange(range.start).gte, lt: keyGroupRange(range.end).lt };
}

/** Every key of one namespace in one key group. */
export function namespaceRange(keyGroup: KeyGroup, namespace: StateNamespace): KeyRange {
  checkKeyGroup(keyGroup);
  const prefix = namespacePrefix(namespace).bytes;
  const gte = Buffer.allocUnsafe(KEY_GROUP_BYTES + prefix.length);
  gte.writeUInt16BE(keyGroup, 0);
  prefix.copy(gte, KEY_GROUP_BYTES);
  return { gte, lt: prefixSuccessor(gte) };
}

/**
 * The smallest key greater than every key that starts with `prefix`: increment the last byte that is not 0xff and
 * cut what follows. Range prefixes start with a key group ≤ 0x7fff, so such a byte always exists.
 */
function prefixSuccessor(prefix: Buffer): Buffer {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i] !== 0xff) {
      const out = Buffer.from(prefix.subarray(0, i + 1));
      out[i]++;
      return out;
    }
  }
  throw new InvalidStateRefError(`key prefix ${prefix.toString('hex')} has no successor`);
}

/**
 * key → key group without allocating: the serialised key (see key-serde.ts) is written into one reused scratch
 * buffer and hashed there. keyBy runs this for every record, and most keys are only routed, never stored, so the
 * key's own bytes are built later, when (if) something needs them.
 */
import { encodeKey, type KeyValue, NUMBER_TAG, STRING_TAG } from './key-serde';
import { murmur3, murmur3Prefix } from './murmur3';

/** Keys up to this many chars are hashed in the scratch buffer; longer ones are encoded first (rare, still correct). */
const SCRATCH_CHARS = 256;
const scratch = Buffer.allocUnsafe(SCRATCH_CHARS + 1);

/** murmur3 of encodeKey(key), without building encodeKey(key). Throws InvalidKeyError exactly when encodeKey does. */
export function hashKey(key: KeyValue): number {
  if (typeof key === 'string') {
    const n = key.length;
    if (n <= SCRATCH_CHARS) {
      scratch[0] = STRING_TAG;
      let i = 0;
      for (; i < n; i++) {
        const c = key.charCodeAt(i);
        // Beyond ASCII a char is not one UTF-8 byte: fall back to the encoder.
        if (c > 0x7f) break;
        scratch[i + 1] = c;
      }
      if (i === n) return murmur3Prefix(scratch, n + 1);
    }
    return murmur3(encodeKey(key));
  }
  if (typeof key === 'number' && Number.isFinite(key)) {
    scratch[0] = NUMBER_TAG;
    scratch.writeDoubleBE(key, 1);
    return murmur3Prefix(scratch, 9);
  }
  // The same error (and message) as encodeKey.
  return murmur3(encodeKey(key));
}

/** keyGroupFor(encodeKey(key), maxParallelism), without the allocation. */
export function keyGroupOfKey(key: KeyValue, maxParallelism: number): number {
  return hashKey(key) % maxParallelism;
}

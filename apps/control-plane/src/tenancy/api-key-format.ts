import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * `weir_<keyId>_<secret>`: the key id (12 random bytes, hex) finds the row; the secret (32 random bytes, base64url)
 * proves possession. Hex ids contain no `_`, so the first `_` after the id is the separator even though base64url
 * secrets may contain `_` themselves.
 */
const API_KEY = /^weir_([a-f0-9]{24})_([A-Za-z0-9_-]{43})$/;

export interface ParsedApiKey {
  readonly keyId: string;
  readonly secret: string;
}

export interface NewApiKey extends ParsedApiKey {
  /** The whole key, shown to its owner once and never stored. */
  readonly token: string;
  readonly secretSha256: Buffer;
}

export function generateApiKey(): NewApiKey {
  const keyId = randomBytes(12).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { keyId, secret, token: `weir_${keyId}_${secret}`, secretSha256: hashSecret(secret) };
}

/** null when the token does not have the shape of a Weir API key. */
export function parseApiKey(token: string): ParsedApiKey | null {
  const match = API_KEY.exec(token);
  return match ? { keyId: match[1], secret: match[2] } : null;
}

/**
 * sha256, not a slow KDF: the secret carries 256 random bits, so no dictionary or brute force applies, and hashing
 * sits on every authenticated request. Slow hashes protect low-entropy, human-chosen passwords.
 */
export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Constant time in the secret: a mismatch position is not observable through timing. */
export function secretMatches(secret: string, expectedSha256: Buffer): boolean {
  const actual = hashSecret(secret);
  return actual.length === expectedSha256.length && timingSafeEqual(actual, expectedSha256);
}

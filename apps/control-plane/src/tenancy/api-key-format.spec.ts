import { describe, expect, it } from 'vitest';
import { generateApiKey, hashSecret, parseApiKey, secretMatches } from './api-key-format';

describe('API key format', () => {
  it('generates weir_<24 hex>_<43 base64url> keys that parse back', () => {
    for (let i = 0; i < 50; i++) {
      const key = generateApiKey();
      expect(key.token).toMatch(/^weir_[a-f0-9]{24}_[A-Za-z0-9_-]{43}$/);
      expect(parseApiKey(key.token)).toEqual({ keyId: key.keyId, secret: key.secret });
      expect(key.secretSha256.equals(hashSecret(key.secret))).toBe(true);
    }
  });

  it('rejects anything else', () => {
    const { token } = generateApiKey();
    for (const bad of ['', 'weir_', token.slice(0, -1), `${token}x`, token.replace('weir_', 'WEIR_'), ` ${token}`, token.toUpperCase()]) {
      expect(parseApiKey(bad), bad).toBeNull();
    }
  });

  it('matches only the right secret', () => {
    const key = generateApiKey();
    expect(secretMatches(key.secret, key.secretSha256)).toBe(true);
    expect(secretMatches(generateApiKey().secret, key.secretSha256)).toBe(false);
    expect(secretMatches(key.secret, Buffer.alloc(5))).toBe(false);
  });
});

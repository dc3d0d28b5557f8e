import { describe, expect, it } from 'vitest';
import { canonicalJson, requestFingerprint } from './fingerprint';

describe('canonicalJson', () => {
  it('sorts keys at every level and drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { y: 1, x: 0 }], c: undefined } })).toBe('{"a":{"d":[2,{"x":0,"y":1}]},"b":1}');
  });

  it('keeps array order and scalar types', () => {
    expect(canonicalJson([3, '3', true, null])).not.toBe(canonicalJson(['3', 3, true, null]));
    expect(canonicalJson(undefined)).toBe('null');
  });
});

describe('requestFingerprint', () => {
  it('is equal for reordered bodies and differs by body, path and method', () => {
    const base = requestFingerprint('post', '/v1/api-keys', { name: 'a', scope: 'read' });
    expect(requestFingerprint('POST', '/v1/api-keys', { scope: 'read', name: 'a' })).toBe(base);
    expect(requestFingerprint('POST', '/v1/api-keys', { scope: 'write', name: 'a' })).not.toBe(base);
    expect(requestFingerprint('POST', '/v1/tenants', { scope: 'read', name: 'a' })).not.toBe(base);
    expect(requestFingerprint('PUT', '/v1/api-keys', { scope: 'read', name: 'a' })).not.toBe(base);
  });
});

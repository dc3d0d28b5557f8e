import type { Pool } from '@weir/db';
import { describe, expect, it } from 'vitest';
import { generateApiKey } from './api-key-format';
import type { ApiKeyUsage } from './api-key-usage';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { UnauthorizedProblem } from './auth.problems';

/** A pool that answers the lookup function from a map, counting queries, optionally held until released. */
function fakePool(keys: Map<string, { tenantId: string; scope: 'read' | 'write'; sha: Buffer }>) {
  let queries = 0;
  let gate: Promise<void> | undefined;
  const pool = {
    query: async (_sql: string, [keyId]: [string]) => {
      queries++;
      const row = keys.get(keyId);
      const rows = row ? [{ tenant_id: row.tenantId, scope: row.scope, secret_sha256: row.sha }] : [];
      await gate;
      return { rows };
    },
  };
  return {
    pool: pool as unknown as Pool,
    queries: () => queries,
    hold: () => {
      let release!: () => void;
      gate = new Promise<void>((r) => (release = r));
      return () => {
        gate = undefined;
        release();
      };
    },
  };
}

/** Records what the authenticator notes, instead of writing it. */
function fakeUsage() {
  const noted: { keyId: string; tenantId: string; at: number }[] = [];
  const usage = { note: (keyId: string, tenantId: string, at: number) => void noted.push({ keyId, tenantId, at }) };
  return { usage: usage as unknown as ApiKeyUsage, noted };
}

describe('ApiKeyAuthenticator', () => {
  const key = generateApiKey();
  const keys = new Map([[key.keyId, { tenantId: 't1', scope: 'write' as const, sha: key.secretSha256 }]]);

  it('returns the principal and caches the lookup', async () => {
    const db = fakePool(keys);
    const auth = new ApiKeyAuthenticator(db.pool, fakeUsage().usage);
    expect(await auth.authenticate(key.token)).toEqual({ tenantId: 't1', keyId: key.keyId, scopes: ['read', 'write', 'rules'] });
    await auth.authenticate(key.token);
    expect(db.queries()).toBe(1);
  });

  it('shares one query among concurrent lookups of a key', async () => {
    const db = fakePool(keys);
    const auth = new ApiKeyAuthenticator(db.pool, fakeUsage().usage);
    await Promise.all([auth.authenticate(key.token), auth.authenticate(key.token), auth.authenticate(key.token)]);
    expect(db.queries()).toBe(1);
  });

  it('refuses a wrong secret, an unknown id and a malformed token alike, without caching unknown ids', async () => {
    const db = fakePool(keys);
    const auth = new ApiKeyAuthenticator(db.pool, fakeUsage().usage);
    const other = generateApiKey();
    for (const token of [`weir_${key.keyId}_${other.secret}`, other.token, other.token, 'Bearer x']) {
      await expect(auth.authenticate(token)).rejects.toBeInstanceOf(UnauthorizedProblem);
    }
    expect(db.queries()).toBe(3);
  });

  it('notes each successful authentication as a use of the key, and nothing for a refused one', async () => {
    const db = fakePool(keys);
    const usage = fakeUsage();
    const auth = new ApiKeyAuthenticator(db.pool, usage.usage);
    const before = Date.now();
    await auth.authenticate(key.token);
    await auth.authenticate(key.token);
    await expect(auth.authenticate(`weir_${key.keyId}_${generateApiKey().secret}`)).rejects.toBeInstanceOf(UnauthorizedProblem);
    expect(usage.noted.map((u) => [u.keyId, u.tenantId])).toEqual([
      [key.keyId, 't1'],
      [key.keyId, 't1'],
    ]);
    expect(usage.noted.every((u) => u.at >= before && u.at <= Date.now())).toBe(true);
  });

  it('looks the key up again after invalidate, and does not cache a lookup that raced with it', async () => {
    const db = fakePool(keys);
    const auth = new ApiKeyAuthenticator(db.pool, fakeUsage().usage);
    await auth.authenticate(key.token);
    auth.invalidate(key.keyId);
    const release = db.hold();
    const racing = auth.authenticate(key.token);
    auth.invalidate(key.keyId);
    release();
    await racing;
    await auth.authenticate(key.token);
    expect(db.queries()).toBe(3);
  });
});

/**
 * lastUsedAt on API keys: uses are noted in memory by the authenticator and written every flush interval (short
 * here), through the SECURITY DEFINER function api_keys_mark_used, which only ever moves a key's time forward.
 */
import { createPool, type Pool } from '@weir/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseApiKey } from '../../../apps/control-plane/src/tenancy';
import { eventually, readJson, startControlPlane, testConfig, uniquePrefix, type PageBody, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';

interface KeyBody {
  id: string;
  name: string;
  lastUsedAt: string | null;
  key?: string;
}

const FLUSH_INTERVAL_MS = 200;
const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });

const keyIdOf = (token: string) => parseApiKey(token)!.keyId;

describe('API key lastUsedAt', () => {
  let cp: RunningControlPlane;
  let a: TestTenant;
  let b: TestTenant;
  /** The application role, as the control plane connects. */
  let app: Pool;

  const call = (path: string, token: string, init: RequestInit = {}) =>
    fetch(`${cp.url}${path}`, { ...init, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...(init.headers ?? {}) } });
  const keysOf = async (tenant: TestTenant) => (await readJson<PageBody<KeyBody>>(await call('/v1/api-keys?limit=200', tenant.writeKey))).items;
  const keyOf = async (tenant: TestTenant, keyId: string) => (await keysOf(tenant)).find((k) => k.id === keyId)!;
  /** Polls the list (the flush runs every FLUSH_INTERVAL_MS) until the key's lastUsedAt passes `after`. */
  const usedAfter = (tenant: TestTenant, keyId: string, after: number) =>
    eventually(`key ${keyId} to be recorded as used after ${new Date(after).toISOString()}`, async () => {
      const lastUsedAt = (await keyOf(tenant, keyId)).lastUsedAt;
      return lastUsedAt !== null && Date.parse(lastUsedAt) > after ? Date.parse(lastUsedAt) : undefined;
    }, { timeoutMs: 10_000, everyMs: 50 });

  beforeAll(async () => {
    cp = await startControlPlane(config, { apiKeyUsageFlushIntervalMs: FLUSH_INTERVAL_MS });
    [a, b] = await Promise.all([createTestTenant(config), createTestTenant(config)]);
    app = createPool({ connectionString: config.WEIR_PG_URL, max: 1, applicationName: 'weir-test-last-used' });
  });
  afterAll(async () => {
    await cp?.close();
    await app?.end();
    await Promise.all([a?.cleanup(), b?.cleanup()]);
  });

  it('records a use within the flush interval, leaves unused keys null, and moves only forward', async () => {
    const idle = await readJson<KeyBody>(await call('/v1/api-keys', a.writeKey, { method: 'POST', body: JSON.stringify({ name: 'idle', scope: 'read' }) }));
    expect(idle.lastUsedAt).toBeNull();

    const before = Date.now();
    expect((await call('/v1/tenant', a.readKey)).status).toBe(200);
    const afterUse = Date.now();
    const first = await usedAfter(a, keyIdOf(a.readKey), before - 1);
    // The time of the authentication, not of the flush.
    expect(first).toBeGreaterThanOrEqual(before);
    expect(first).toBeLessThanOrEqual(afterUse);

    const keys = await keysOf(a);
    expect(keys.find((k) => k.id === idle.id)!.lastUsedAt).toBeNull();
    // The other tenant's keys are untouched by a's uses, and a's keys are not in its list.
    const bKeys = await keysOf(b);
    expect(bKeys.find((k) => k.id === keyIdOf(b.readKey))!.lastUsedAt).toBeNull();
    expect(bKeys.map((k) => k.id)).not.toContain(keyIdOf(a.readKey));

    const secondUse = Date.now();
    expect(secondUse).toBeGreaterThan(first);
    expect((await call('/v1/tenant', a.readKey)).status).toBe(200);
    const second = await usedAfter(a, keyIdOf(a.readKey), first);
    expect(second).toBeGreaterThanOrEqual(secondUse);
    expect(second).toBeLessThanOrEqual(Date.now());
  });

  it('counts a GraphQL request as a use', async () => {
    const created = await readJson<KeyBody>(await call('/v1/api-keys', b.writeKey, { method: 'POST', body: JSON.stringify({ name: 'graphql', scope: 'read' }) }));
    const before = Date.now();
    const res = await call('/graphql', created.key!, { method: 'POST', body: JSON.stringify({ query: '{ __typename }' }) });
    expect(res.status).toBe(200);
    expect(await usedAfter(b, created.id, before - 1)).toBeGreaterThanOrEqual(before);
  });

  it('lets the application role only move a key of the named tenant forward, never past now', async () => {
    const keyId = keyIdOf(a.readKey);
    const recorded = await usedAfter(a, keyId, 0);
    const mark = (tenantId: string, at: Date) =>
      app.query<{ n: number }>('SELECT api_keys_mark_used($1::text[], $2::text[], $3::timestamptz[]) AS n', [[keyId], [tenantId], [at]]);

    // An older use (another instance's late flush, say) changes nothing.
    expect((await mark(a.tenantId, new Date(recorded - 60_000))).rows[0].n).toBe(0);
    // The key id with another tenant's id changes nothing either.
    expect((await mark(b.tenantId, new Date(Date.now() + 60_000))).rows[0].n).toBe(0);
    expect(Date.parse((await keyOf(a, keyId)).lastUsedAt!)).toBe(recorded);

    // A time in the future is stamped as the database's now.
    expect((await mark(a.tenantId, new Date(Date.now() + 3_600_000))).rows[0].n).toBe(1);
    const stamped = Date.parse((await keyOf(a, keyId)).lastUsedAt!);
    expect(stamped).toBeGreaterThan(recorded);
    expect(stamped).toBeLessThanOrEqual(Date.now());
  });
});

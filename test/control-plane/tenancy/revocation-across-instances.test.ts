import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_CACHE_TTL_MS } from '../../../apps/control-plane/src/tenancy';
import { deleteQueues, eventually, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';

const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });

describe('revoking a key with two control planes', () => {
  let one: RunningControlPlane;
  let two: RunningControlPlane;
  let tenant: TestTenant;

  beforeAll(async () => {
    [one, two] = await Promise.all([startControlPlane(config), startControlPlane(config)]);
    tenant = await createTestTenant(config);
  });
  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
    await tenant?.cleanup();
    await deleteQueues(config);
  });

  it('stops the key on the other instance through the Redis broadcast, well before its cache entry expires', async () => {
    const created = (await (
      await fetch(`${one.url}/v1/api-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.writeKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'short-lived', scope: 'read' }),
      })
    ).json()) as { id: string; key: string };
    const asKey = (cp: RunningControlPlane) => fetch(`${cp.url}/v1/tenant`, { headers: { authorization: `Bearer ${created.key}` } });
    // Both instances now hold the key in their caches.
    expect((await asKey(one)).status).toBe(200);
    expect((await asKey(two)).status).toBe(200);

    const res = await fetch(`${one.url}/v1/api-keys/${created.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${tenant.writeKey}` } });
    expect(res.status).toBe(204);
    expect((await asKey(one)).status).toBe(401);
    // Polled for less than the cache TTL: passing through expiry alone would take AUTH_CACHE_TTL_MS.
    await eventually('instance two to refuse the key', async () => ((await asKey(two)).status === 401 ? true : undefined), {
      timeoutMs: AUTH_CACHE_TTL_MS / 2,
      everyMs: 20,
    });
  });
});

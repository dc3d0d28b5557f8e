import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturingLog, readJson, startControlPlane, testConfig, uniquePrefix, type PageBody, type ProblemBody, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, deleteTenant, type TestTenant } from '../support/tenants';

interface KeyBody {
  id: string;
  name: string;
  scope: string;
  createdAt: string;
  revokedAt: string | null;
  key?: string;
}
interface TenantBody {
  id: string;
  name: string;
  quotas: { maxDeployments: number; maxTotalParallelism: number; maxBundleBytes: number };
}

const adminToken = randomBytes(32).toString('base64url');
// debug: every request and Nest line is logged, so the no-secrets check below sees as much as possible.
const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_ADMIN_TOKEN: adminToken, WEIR_LOG_LEVEL: 'debug' });

describe('tenants and API keys', () => {
  const log = capturingLog();
  let cp: RunningControlPlane;
  let a: TestTenant;
  let b: TestTenant;
  const created: string[] = [];

  const call = (path: string, token: string | undefined, init: RequestInit = {}) =>
    fetch(`${cp.url}${path}`, {
      ...init,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.headers ?? {}) },
    });
  const post = (path: string, token: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
    call(path, token, { method: 'POST', body: JSON.stringify(body), headers });

  beforeAll(async () => {
    cp = await startControlPlane(config, { logDestination: log.destination });
    [a, b] = await Promise.all([createTestTenant(config), createTestTenant(config)]);
  });
  afterAll(async () => {
    await cp?.close();
    await Promise.all([a?.cleanup(), b?.cleanup(), ...created.map((id) => deleteTenant(config, id))]);
  });

  it('refuses /v1 without a valid key, with a problem and WWW-Authenticate', async () => {
    for (const token of [undefined, 'nonsense', `weir_${'0'.repeat(24)}_${'A'.repeat(43)}`, a.writeKey.slice(0, -1) + (a.writeKey.endsWith('A') ? 'B' : 'A')]) {
      const res = await call('/v1/api-keys', token);
      expect(res.status, String(token)).toBe(401);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect((await readJson<ProblemBody>(res)).type).toBe('urn:weir:problem:unauthorized');
    }
    expect((await fetch(`${cp.url}/health`)).status).toBe(200);
  });

  it('bootstraps a tenant and its first key with the admin token only', async () => {
    expect((await post('/v1/tenants', undefined, { name: 'x' })).status).toBe(401);
    expect((await post('/v1/tenants', a.writeKey, { name: 'x' })).status).toBe(401);
    const bad = await post('/v1/tenants', adminToken, { name: '', quotas: { maxDeployments: -1 } });
    expect(bad.status).toBe(400);
    expect((await readJson<ProblemBody>(bad)).errors!.map((e) => e.name).sort()).toEqual(['name', 'quotas.maxDeployments']);

    const res = await post('/v1/tenants', adminToken, { name: 'Acme', quotas: { maxBundleBytes: 1024 } });
    expect(res.status).toBe(201);
    const tenant = await readJson<TenantBody>(res);
    created.push(tenant.id);
    expect(tenant).toMatchObject({ name: 'Acme', quotas: { maxDeployments: 20, maxTotalParallelism: 64, maxBundleBytes: 1024 } });

    const keyRes = await post(`/v1/tenants/${tenant.id}/api-keys`, adminToken, { name: 'first', scope: 'write' });
    expect(keyRes.status).toBe(201);
    const key = await readJson<KeyBody>(keyRes);
    const me = await call('/v1/tenant', key.key);
    expect(me.status).toBe(200);
    expect((await readJson<TenantBody>(me)).id).toBe(tenant.id);

    const missing = await post(`/v1/tenants/t${'0'.repeat(20)}/api-keys`, adminToken, { name: 'x', scope: 'read' });
    expect(missing.status).toBe(404);
  });

  it('shows a new secret once, lists keys without secrets, and revokes at once', async () => {
    const res = await post('/v1/api-keys', a.writeKey, { name: 'ci', scope: 'read' });
    expect(res.status).toBe(201);
    const key = await readJson<KeyBody>(res);
    expect(key.key).toMatch(new RegExp(`^weir_${key.id}_[A-Za-z0-9_-]{43}$`));
    expect((await call('/v1/tenant', key.key)).status).toBe(200);

    const listRes = await call('/v1/api-keys?limit=200', a.writeKey);
    const raw = await listRes.text();
    const list = JSON.parse(raw) as PageBody<KeyBody>;
    expect(list.items.map((k) => k.id)).toContain(key.id);
    expect(list.items.every((k) => !('key' in k))).toBe(true);
    // The secret is everything after weir_<id>_ (base64url may itself contain '_').
    expect(raw).not.toContain(key.key!.slice(`weir_${key.id}_`.length));

    expect((await call(`/v1/api-keys/${key.id}`, a.writeKey, { method: 'DELETE' })).status).toBe(204);
    expect((await call('/v1/tenant', key.key)).status).toBe(401);
    const after = await readJson<PageBody<KeyBody>>(await call('/v1/api-keys?limit=200', a.writeKey));
    expect(after.items.find((k) => k.id === key.id)!.revokedAt).not.toBeNull();
  });

  it('pages the key list with a cursor', async () => {
    for (let i = 0; i < 3; i++) expect((await post('/v1/api-keys', b.writeKey, { name: `k${i}`, scope: 'read' })).status).toBe(201);
    const first = await readJson<PageBody<KeyBody>>(await call('/v1/api-keys?limit=2', b.writeKey));
    expect(first.items).toHaveLength(2);
    const second = await readJson<PageBody<KeyBody>>(await call(`/v1/api-keys?limit=2&cursor=${first.nextCursor}`, b.writeKey));
    expect(second.items.length).toBeGreaterThan(0);
    expect(second.items[0].id > first.items[1].id).toBe(true);
  });

  it('lets a read key read but not write (403)', async () => {
    expect((await call('/v1/tenant', a.readKey)).status).toBe(200);
    const res = await post('/v1/api-keys', a.readKey, { name: 'x', scope: 'write' });
    expect(res.status).toBe(403);
    expect((await readJson<ProblemBody>(res)).detail).toContain("'write'");
  });

  it("answers another tenant's key ids with 404 and changes nothing", async () => {
    const bKey = await readJson<KeyBody>(await post('/v1/api-keys', b.writeKey, { name: 'b-only', scope: 'read' }));
    const res = await call(`/v1/api-keys/${bKey.id}`, a.writeKey, { method: 'DELETE' });
    expect(res.status).toBe(404);
    expect((await call('/v1/tenant', bKey.key)).status).toBe(200);
    const aList = await readJson<PageBody<KeyBody>>(await call('/v1/api-keys?limit=200', a.writeKey));
    expect(aList.items.map((k) => k.id)).not.toContain(bKey.id);
  });

  it('names the bad field of a create', async () => {
    const res = await post('/v1/api-keys', a.writeKey, { name: 'x', scope: 'admin', extra: 1 });
    expect(res.status).toBe(400);
    const names = (await readJson<ProblemBody>(res)).errors!.map((e) => e.name).sort();
    expect(names).toEqual(['extra', 'scope']);
    expect((await call('/v1/api-keys/not-an-id', a.writeKey, { method: 'DELETE' })).status).toBe(400);
  });

  it('replays a create under the same Idempotency-Key and refuses the key for another body (422)', async () => {
    const idem = { 'idempotency-key': `k-${randomBytes(8).toString('hex')}` };
    const first = await post('/v1/api-keys', a.writeKey, { name: 'idem', scope: 'read' }, idem);
    const second = await post('/v1/api-keys', a.writeKey, { scope: 'read', name: 'idem' }, idem);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await readJson<KeyBody>(second)).toEqual(await readJson<KeyBody>(first));
    const other = await post('/v1/api-keys', a.writeKey, { name: 'other', scope: 'read' }, idem);
    expect(other.status).toBe(422);
    // The same key string is another tenant's own key.
    expect((await post('/v1/api-keys', b.writeKey, { name: 'other', scope: 'read' }, idem)).status).toBe(201);
    const list = await readJson<PageBody<KeyBody>>(await call('/v1/api-keys?limit=200', a.writeKey));
    expect(list.items.filter((k) => k.name === 'idem')).toHaveLength(1);

    const tenantIdem = { 'idempotency-key': `t-${randomBytes(8).toString('hex')}` };
    const t1 = await readJson<TenantBody>(await post('/v1/tenants', adminToken, { name: 'Once' }, tenantIdem));
    created.push(t1.id);
    const t2 = await readJson<TenantBody>(await post('/v1/tenants', adminToken, { name: 'Once' }, tenantIdem));
    expect(t2.id).toBe(t1.id);
    expect((await post('/v1/tenants', adminToken, { name: 'Other' }, tenantIdem)).status).toBe(422);
    expect((await post('/v1/api-keys', a.writeKey, { name: 'x', scope: 'read' }, { 'idempotency-key': 'bad key' })).status).toBe(400);
  });

  it('never writes a key or the admin token to the log', () => {
    const text = log.lines().map((l) => JSON.stringify(l)).join('\n');
    expect(text.length).toBeGreaterThan(0);
    for (const secret of [a.writeKey, a.readKey, b.writeKey, adminToken]) expect(text).not.toContain(secret.startsWith('weir_') ? secret.slice(secret.indexOf('_', 'weir_'.length) + 1) : secret);
  });
});

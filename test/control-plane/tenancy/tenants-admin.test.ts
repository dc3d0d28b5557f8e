/**
 * Tenant administration by the platform admin against the real app and database: listing every tenant (through the
 * SECURITY DEFINER page function, so tenant keys gain nothing), reading one, renaming it and changing its quotas,
 * what a lowered quota does to the next deploy, and that a tenant's API key is refused on all of it.
 */
import { randomBytes } from 'node:crypto';
import { createPool, withTenant, type Pool } from '@weir/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuotaService } from '../../../apps/control-plane/src/tenancy/quota.service';
import { api, insertBundle } from '../deployments/support';
import {
  adminHeaders,
  deleteQueues,
  eventually,
  readJson,
  startControlPlane,
  testConfig,
  uniquePrefix,
  type PageBody,
  type ProblemBody,
  type RunningControlPlane,
} from '../support/control-plane';
import { createTestTenant, deleteTenant, type TestTenant } from '../support/tenants';

interface TenantBody {
  id: string;
  name: string;
  quotas: { maxDeployments: number; maxTotalParallelism: number; maxBundleBytes: number };
  createdAt: string;
}

const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });
const MISSING = `t${'0'.repeat(20)}`;

describe('tenant administration', () => {
  let cp: RunningControlPlane;
  let pool: Pool;
  let a: TestTenant;
  let b: TestTenant;
  const created: string[] = [];

  const call = (path: string, headers: Record<string, string>, method = 'GET', body?: unknown) =>
    fetch(`${cp.url}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const admin = (path: string, method = 'GET', body?: unknown) => call(path, adminHeaders(), method, body);
  const tenantKey = (key: string) => ({ authorization: `Bearer ${key}` });
  const problemNames = async (res: Response) => (await readJson<ProblemBody>(res)).errors!.map((e) => `${e.in} ${e.name}`).sort();

  beforeAll(async () => {
    pool = createPool({ connectionString: config.WEIR_PG_URL, max: 2 });
    cp = await startControlPlane(config);
    [a, b] = await Promise.all([createTestTenant(config), createTestTenant(config)]);
  });

  afterAll(async () => {
    await cp?.close();
    await pool?.end();
    await Promise.allSettled([a?.cleanup(), b?.cleanup(), ...created.map((id) => deleteTenant(config, id))]);
    await deleteQueues(config);
  });

  it('lists every tenant in id order, a page at a time', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await admin('/v1/tenants', 'POST', { name: `listed ${i}` });
      expect(res.status).toBe(201);
      created.push((await readJson<TenantBody>(res)).id);
    }
    const first = await readJson<PageBody<TenantBody>>(await admin('/v1/tenants?limit=2'));
    expect(first.items).toHaveLength(2);
    expect(first.nextCursor).not.toBeNull();

    // The database is shared with other test files: walk to the end and look for ours.
    const seen: TenantBody[] = [...first.items];
    let cursor = first.nextCursor;
    while (cursor) {
      const res = await admin(`/v1/tenants?limit=2&cursor=${cursor}`);
      expect(res.status).toBe(200);
      const page = await readJson<PageBody<TenantBody>>(res);
      expect(page.items.length).toBeGreaterThan(0);
      seen.push(...page.items);
      cursor = page.nextCursor;
    }
    const ids = seen.map((t) => t.id);
    expect(ids).toEqual([...ids].sort());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of [...created, a.tenantId, b.tenantId]) expect(ids).toContain(id);
    expect(seen.find((t) => t.id === created[0])).toMatchObject({ name: 'listed 0', quotas: { maxDeployments: 20, maxTotalParallelism: 64, maxBundleBytes: 52428800 } });
  });

  it('refuses list parameters it does not know, naming them', async () => {
    expect(await problemNames(await admin('/v1/tenants?limit=0&cursor=nope&name=x'))).toEqual(['query cursor', 'query limit', 'query name']);
  });

  it('reads one tenant: 404 when there is none, 400 for a malformed id', async () => {
    const res = await admin(`/v1/tenants/${a.tenantId}`);
    expect(res.status).toBe(200);
    expect(await readJson<TenantBody>(res)).toMatchObject({ id: a.tenantId, name: `test ${a.tenantId}`, quotas: { maxDeployments: 20 } });

    const missing = await admin(`/v1/tenants/${MISSING}`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('application/problem+json');
    expect((await readJson<ProblemBody>(missing)).detail).toContain(MISSING);

    expect(await problemNames(await admin('/v1/tenants/not-a-tenant'))).toEqual(['path id']);
  });

  it("changes the name and the quotas the patch names, and the tenant's own key sees them", async () => {
    const res = await admin(`/v1/tenants/${a.tenantId}`, 'PATCH', { name: ' Renamed ', quotas: { maxTotalParallelism: 7, maxBundleBytes: 2048 } });
    expect(res.status).toBe(200);
    const expected = { id: a.tenantId, name: 'Renamed', quotas: { maxDeployments: 20, maxTotalParallelism: 7, maxBundleBytes: 2048 } };
    expect(await readJson<TenantBody>(res)).toMatchObject(expected);
    expect(await readJson<TenantBody>(await call('/v1/tenant', tenantKey(a.readKey)))).toMatchObject(expected);

    // A patch of the name alone keeps the quotas; b is untouched by either.
    const renamed = await readJson<TenantBody>(await admin(`/v1/tenants/${a.tenantId}`, 'PATCH', { name: 'Again' }));
    expect(renamed).toMatchObject({ name: 'Again', quotas: expected.quotas });
    expect(await readJson<TenantBody>(await call('/v1/tenant', tenantKey(b.readKey)))).toMatchObject({ name: `test ${b.tenantId}`, quotas: { maxTotalParallelism: 64 } });

    expect((await admin(`/v1/tenants/${MISSING}`, 'PATCH', { name: 'x' })).status).toBe(404);
  });

  it('lowers maxDeployments below what is in use: the deployment stays, the next create is a 409', async () => {
    const q = await createTestTenant(config);
    try {
      // Never run: an empty module, deployments created SUSPENDED.
      const bundleId = await insertBundle(config, q.tenantId, { code: Buffer.from('export default {};'), sha256: randomBytes(32).toString('hex') });
      const client = api(() => cp.url, q.writeKey);
      const name = () => `quota-${randomBytes(3).toString('hex')}`;
      const first = await client.post('/v1/deployments', { name: name(), bundleId, desiredState: 'SUSPENDED' });
      expect(first.status).toBe(201);

      expect((await admin(`/v1/tenants/${q.tenantId}`, 'PATCH', { quotas: { maxDeployments: 0 } })).status).toBe(200);
      const refused = await client.post('/v1/deployments', { name: name(), bundleId, desiredState: 'SUSPENDED' });
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ type: 'urn:weir:problem:quota-exceeded', detail: 'Quota maxDeployments exceeded: limit 0, in use 1, requested 1' });
      expect((await client.get(`/v1/deployments/${first.body.id}`)).body).toMatchObject({ id: first.body.id, desiredState: 'SUSPENDED' });

      expect((await admin(`/v1/tenants/${q.tenantId}`, 'PATCH', { quotas: { maxDeployments: 2 } })).status).toBe(200);
      expect((await client.post('/v1/deployments', { name: name(), bundleId, desiredState: 'SUSPENDED' })).status).toBe(201);
    } finally {
      await q.cleanup();
    }
  });

  it("queues a patch behind a quota check holding the tenant's row, so the check sees the quotas before it", async () => {
    let release!: () => void;
    let locked!: (pid: number) => void;
    const holderPid = new Promise<number>((resolve) => (locked = resolve));
    const holder = withTenant(pool, b.tenantId, async (client) => {
      const quotas = await new QuotaService().lockQuotas(client, b.tenantId);
      locked((await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid);
      await new Promise<void>((resolve) => (release = resolve));
      return quotas;
    });
    const pid = await holderPid;
    let settled = false;
    const patch = admin(`/v1/tenants/${b.tenantId}`, 'PATCH', { quotas: { maxDeployments: 3 } }).finally(() => (settled = true));
    try {
      await eventually('the patch waiting for the quota lock', async () => {
        const { rows } = await pool.query('SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid]);
        return rows.length ? true : undefined;
      });
      expect(settled).toBe(false);
    } finally {
      release();
    }
    expect((await holder).maxDeployments).toBe(20);
    expect((await readJson<TenantBody>(await patch)).quotas.maxDeployments).toBe(3);
    expect(await withTenant(pool, b.tenantId, (c) => new QuotaService().lockQuotas(c, b.tenantId))).toMatchObject({ maxDeployments: 3 });
  });

  it('refuses a bad patch with a 400 naming the field, and changes nothing', async () => {
    const before = await (await admin(`/v1/tenants/${a.tenantId}`)).json();
    const path = `/v1/tenants/${a.tenantId}`;
    expect(await problemNames(await admin(path, 'PATCH', { name: 'x', plan: 'gold' }))).toEqual(['body plan']);
    expect(await problemNames(await admin(path, 'PATCH', { quotas: { maxDeployments: -1, maxTotalParallelism: 1_000_001, maxBundleBytes: 0 } }))).toEqual([
      'body quotas.maxBundleBytes',
      'body quotas.maxDeployments',
      'body quotas.maxTotalParallelism',
    ]);
    expect(await problemNames(await admin(path, 'PATCH', { name: '' }))).toEqual(['body name']);
    expect(await problemNames(await admin(path, 'PATCH', { quotas: {} }))).toEqual(['body quotas']);

    const empty = await admin(path, 'PATCH', {});
    expect(empty.status).toBe(400);
    const problem = await readJson<ProblemBody>(empty);
    expect(problem.errors).toEqual([{ in: 'body', name: '(root)', reason: 'must change name or quotas (or both)' }]);
    expect((await admin(path, 'PATCH')).status).toBe(400);

    expect(await problemNames(await admin('/v1/tenants/T0000', 'PATCH', { name: 'x' }))).toEqual(['path id']);
    expect(await (await admin(path)).json()).toEqual(before);
  });

  it("refuses a tenant's API keys on every tenant administration route, and changes nothing", async () => {
    const before = await Promise.all([a, b].map(async (t) => (await admin(`/v1/tenants/${t.tenantId}`)).json()));
    const routes: [string, string, unknown?][] = [
      ['GET', '/v1/tenants'],
      ['GET', `/v1/tenants/${a.tenantId}`],
      ['GET', `/v1/tenants/${b.tenantId}`],
      ['PATCH', `/v1/tenants/${a.tenantId}`, { quotas: { maxDeployments: 100_000 } }],
      ['PATCH', `/v1/tenants/${b.tenantId}`, { name: 'taken over' }],
    ];
    for (const [method, path, body] of routes) {
      for (const headers of [tenantKey(a.writeKey), tenantKey(a.readKey), {}]) {
        const res = await call(path, headers, method, body);
        const where = `${method} ${path}`;
        expect(res.status, where).toBe(401);
        expect(res.headers.get('www-authenticate'), where).toMatch(/^Bearer/);
        // The problem echoes the path (instance), never a tenant's details.
        expect(await res.text(), where).not.toContain('maxDeployments');
      }
    }
    expect(await Promise.all([a, b].map(async (t) => (await admin(`/v1/tenants/${t.tenantId}`)).json()))).toEqual(before);
  });
});

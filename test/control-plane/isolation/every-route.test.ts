/**
 * Tenant isolation over the whole REST surface: every tenant route in the checked-in OpenAPI document is called
 * with tenant B's write key and tenant A's ids. Nothing may succeed, fail with a 5xx, name A's data, or change
 * anything A sees. Walking the OpenAPI document means a new route is covered the day it is added.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertDeployment } from '../graphql/support';
import { deleteQueues, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';

interface OpenApi {
  paths: Record<string, Record<string, unknown>>;
}

const openapi = JSON.parse(readFileSync(join(__dirname, '../../../openapi/openapi.json'), 'utf8')) as OpenApi;
/** Platform routes (admin token, not a tenant key) are outside a tenant's reach by construction. */
const PLATFORM = [/^\/v1\/tenants/, /^\/v1\/workers/];

describe('tenant isolation', () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });
  let cp: RunningControlPlane;
  let a: TestTenant;
  let b: TestTenant;
  const ids = { deployment: `d${randomBytes(12).toString('hex')}`, bundle: '', slo: '', apiKey: '', bundleName: '' };

  const call = (path: string, key: string, method = 'GET', body?: unknown) =>
    fetch(`${cp.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  /** What tenant A sees of its own resources. */
  async function viewOfA(): Promise<unknown[]> {
    const paths = [
      `/v1/deployments/${ids.deployment}`,
      `/v1/deployments/${ids.deployment}/history`,
      `/v1/deployments/${ids.deployment}/rules`,
      `/v1/deployments/${ids.deployment}/savepoints`,
      `/v1/bundles/${ids.bundle}`,
      `/v1/slos/${ids.slo}`,
      '/v1/api-keys',
      '/v1/tenant',
    ];
    return Promise.all(paths.map(async (p) => ({ p, status: (await call(p, a.writeKey)).status, body: await (await call(p, a.writeKey)).json() })));
  }

  beforeAll(async () => {
    cp = await startControlPlane(config);
    [a, b] = await Promise.all([createTestTenant(config), createTestTenant(config)]);
    ids.bundle = (await insertDeployment(config, a.tenantId, ids.deployment)).bundleId;
    const bundle = (await (await call(`/v1/bundles/${ids.bundle}`, a.readKey)).json()) as { name: string };
    ids.bundleName = bundle.name;
    const slo = await call('/v1/slos', a.writeKey, 'POST', {
      name: 'p99 under 100 ms', deploymentId: ids.deployment, percentile: 'p99', thresholdMs: 100, target: 0.9, windowMinutes: 10,
    });
    expect(slo.status).toBe(201);
    ids.slo = ((await slo.json()) as { id: string }).id;
    const keys = (await (await call('/v1/api-keys', a.writeKey)).json()) as { items: { id: string }[] };
    ids.apiKey = keys.items[0].id;
  });

  afterAll(async () => {
    await cp?.close();
    await Promise.allSettled([a?.cleanup(), b?.cleanup()]);
    await deleteQueues(config);
  });

  function concrete(path: string): string {
    const id = path.startsWith('/v1/deployments/')
      ? ids.deployment
      : path.startsWith('/v1/bundles/')
        ? ids.bundle
        : path.startsWith('/v1/slos/')
          ? ids.slo
          : path.startsWith('/v1/api-keys/')
            ? ids.apiKey
            : 'unknown';
    return path
      .replace('{id}', id)
      .replace('{name}', ids.bundleName)
      .replace('{version}', path.startsWith('/v1/bundles/') ? '1.0.0' : '1')
      .replace('{rolloutId}', 'r1')
      .replace('{savepointId}', 'sp1');
  }

  it('answers every tenant route called with another tenant\'s ids with a 4xx that names nothing of theirs, and changes nothing', async () => {
    const before = await viewOfA();
    const routes = Object.entries(openapi.paths)
      .filter(([path]) => path.startsWith('/v1/') && path.includes('{') && !PLATFORM.some((p) => p.test(path)))
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => ({ path, method: method.toUpperCase() })));
    expect(routes.length).toBeGreaterThan(15);

    for (const { path, method } of routes) {
      const url = concrete(path);
      const res = await call(url, b.writeKey, method, method === 'GET' || method === 'DELETE' ? undefined : {});
      const text = await res.text();
      const where = `${method} ${path} as another tenant`;
      expect(res.status, where).toBeGreaterThanOrEqual(400);
      expect(res.status, where).toBeLessThan(500);
      expect(text, where).not.toContain(a.tenantId);
      // A name the caller put in the URL may be echoed back (instance, detail): that is its own input, not a leak.
      if (!url.includes(ids.bundleName)) expect(text, where).not.toContain(ids.bundleName);
      expect(text, where).not.toContain('p99 under 100 ms');
    }

    // Lists under B's key show none of A's rows.
    for (const list of ['/v1/deployments', '/v1/bundles', '/v1/slos', '/v1/api-keys']) {
      const text = await (await call(list, b.readKey)).text();
      for (const id of [ids.deployment, ids.bundle, ids.slo, ids.apiKey]) expect(text, `${list} as another tenant`).not.toContain(id);
    }

    expect(await viewOfA()).toEqual(before);
  });
});

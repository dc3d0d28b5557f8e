import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TenantDb } from '../../../apps/control-plane/src/tenancy';
import { MetricsStore } from '../../../apps/control-plane/src/metrics/metrics-store';
import { deleteQueues, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';
import { collect, connectWs, deleteEventKeys, gql, insertDeployment, type WsConnection } from './support';

// The default limits but for depth, lowered so that this schema's deepest paths can go over it.
const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_GRAPHQL_MAX_DEPTH: '5' });
let app: RunningControlPlane;
let tenant: TestTenant;
let other: TestTenant;
const deploymentId = `dep-l-${randomBytes(4).toString('hex')}`;
const connections: WsConnection[] = [];

/** The request of the issue: 20,000 aliases of a 200-item page, ~800 KB, under the 1 MiB body limit. */
const ALIASES_20K = `{ ${Array.from({ length: 20_000 }, (_, i) => `a${i}: deployments(limit: 200) { items { id } }`).join(' ')} }`;
const OVER = {
  maxTokens: ALIASES_20K,
  maxAliases: `{ ${Array.from({ length: 21 }, (_, i) => `a${i}: deployments { items { id } }`).join(' ')} }`,
  maxDepth: '{ deployment(id: "d000000000000000000000000") { layout { processes { subtasks { keyGroups { start } } } } } }',
  maxDirectives: `{ deployments { items { ${Array.from({ length: 21 }, () => 'id @include(if: true)').join(' ')} } } }`,
  // One page of 200 deployments, five reads per item: 1,001 reads (over 1,000).
  maxCost:
    '{ deployments(limit: 200) { items { slos { id } metrics { subtasks } scalingPolicy { source } keyGroupMoves { items { moveId } } scalingDecisions { items { decisionId } } } } }',
} as const;

/** What a dashboard asks for: the tenant, a page of deployments with their latest metrics and SLOs. */
const DASHBOARD =
  '{ tenant { id name } deployments { items { id name status desiredState metrics { recordsInPerSec } slos { id name } } nextCursor } }';

/** Counts every read of tenant data (Postgres through TenantDb, metrics from Redis) from here on. */
function countReads(): { count: () => number; restore: () => void } {
  const tenantDb = app.app.get(TenantDb);
  const metrics = app.app.get(MetricsStore);
  const spies = [
    vi.spyOn(tenantDb, 'run'),
    vi.spyOn(tenantDb, 'read'),
    vi.spyOn(tenantDb, 'readWith'),
    vi.spyOn(metrics, 'readLatest'),
    vi.spyOn(metrics, 'readLatestOf'),
  ];
  return { count: () => spies.reduce((n, s) => n + s.mock.calls.length, 0), restore: () => spies.forEach((s) => s.mockRestore()) };
}

beforeAll(async () => {
  app = await startControlPlane(config);
  [tenant, other] = await Promise.all([createTestTenant(config), createTestTenant(config)]);
  await insertDeployment(config, tenant.tenantId, deploymentId);
});

afterAll(async () => {
  for (const c of connections) await c.client.dispose();
  await app?.close();
  await Promise.allSettled([tenant?.cleanup(), other?.cleanup()]);
  await deleteQueues(config);
  await deleteEventKeys(config);
});

describe('GraphQL cost limits', () => {
  it('passes legitimate queries: a dashboard, and introspection', async () => {
    const { status, body } = await gql<{ deployments: { items: { id: string; slos: unknown[] }[] } }>(app.url, tenant.readKey, DASHBOARD);
    expect(body.errors).toBeUndefined();
    expect(status).toBe(200);
    expect(body.data?.deployments.items.map((d) => d.id)).toEqual([deploymentId]);
    const introspection = await gql(app.url, undefined, '{ __schema { queryType { name } types { name fields { name type { name ofType { name ofType { name } } } } } } }');
    expect(introspection.body.errors).toBeUndefined();
  });

  it('refuses an operation over each limit with an error naming it, before any resolver reads anything', async () => {
    await gql(app.url, tenant.readKey, '{ tenant { id } }'); // the API key is checked and cached: the refusals below read nothing
    const reads = countReads();
    try {
      for (const [limit, query] of Object.entries(OVER)) {
        const { status, body } = await gql(app.url, tenant.readKey, query);
        expect(status, limit).toBe(400);
        expect(body.data ?? null).toBeNull();
        expect(body.errors).toHaveLength(1);
        const [error] = body.errors!;
        expect(error.extensions, limit).toMatchObject({ code: 'QUERY_LIMIT_EXCEEDED', limit, max: Number(config[`WEIR_GRAPHQL_${limit.replace('max', 'MAX_').toUpperCase()}` as keyof typeof config]) });
        expect(error.message).toContain(`${limit} limit`);
        expect(error.message).toMatch(/at most \d+ are allowed; .+/);
        expect(JSON.stringify(error)).not.toMatch(/stacktrace| {4}at /);
      }
      expect(reads.count()).toBe(0);
      // …where a legitimate query is seen reading.
      expect((await gql(app.url, tenant.readKey, DASHBOARD)).body.errors).toBeUndefined();
      expect(reads.count()).toBeGreaterThan(0);
    } finally {
      reads.restore();
    }
  });

  it('holds graphql-ws operations to the same limits, and keeps the connection open', async () => {
    const ws = connectWs(app.url, `Bearer ${tenant.readKey}`);
    connections.push(ws);
    await ws.connected;
    const reads = countReads();
    try {
      for (const [limit, query] of Object.entries(OVER)) {
        const refused = collect(ws.client, query, {});
        await vi.waitFor(() => expect(refused.errors.length).toBeGreaterThan(0));
        const [error] = (refused.errors[0] as { extensions?: Record<string, unknown> }[]) ?? [];
        expect(error?.extensions, limit).toMatchObject({ code: 'QUERY_LIMIT_EXCEEDED', limit });
      }
      const subscription = collect(ws.client, `subscription { deploymentStatus(deploymentId: "${deploymentId}") { ${Array.from({ length: 21 }, (_, i) => `s${i}: status`).join(' ')} } }`, {});
      await vi.waitFor(() => expect(subscription.errors.length).toBeGreaterThan(0));
      expect((subscription.errors[0] as { extensions?: Record<string, unknown> }[])[0].extensions).toMatchObject({ code: 'QUERY_LIMIT_EXCEEDED', limit: 'maxAliases' });
      expect(reads.count()).toBe(0);
    } finally {
      reads.restore();
    }
    const ok = collect<{ tenant: { id: string } }>(ws.client, '{ tenant { id } }', {});
    expect((await ok.next()).tenant.id).toBe(tenant.tenantId);
  });

  it("answers another tenant while one tenant sends several over-limit requests at once", async () => {
    const flood = [ALIASES_20K, ALIASES_20K, ALIASES_20K, OVER.maxCost, OVER.maxCost, OVER.maxAliases].map((q) => gql(app.url, tenant.readKey, q));
    const neighbour = gql<{ tenant: { id: string }; deployments: { items: unknown[] } }>(app.url, other.readKey, '{ tenant { id } deployments { items { id } } }');
    const [floodResults, theirs] = await Promise.all([Promise.all(flood), neighbour]);
    for (const { status, body } of floodResults) {
      expect(status).toBe(400);
      expect(body.errors?.[0].extensions?.code).toBe('QUERY_LIMIT_EXCEEDED');
    }
    expect(theirs.status).toBe(200);
    expect(theirs.body.errors).toBeUndefined();
    expect(theirs.body.data).toEqual({ tenant: { id: other.tenantId }, deployments: { items: [] } });
    const health = await fetch(`${app.url}/health`);
    expect(health.status).toBe(200);
  });
});

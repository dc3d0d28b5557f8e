import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, deleteQueues, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';
import { deleteEventKeys, gql, insertDeployment } from './support';

const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });
let app: RunningControlPlane;
let tenant: TestTenant;
let other: TestTenant;
const deploymentId = `dep-q-${randomBytes(4).toString('hex')}`;
let bundleId: string;

beforeAll(async () => {
  app = await startControlPlane(config);
  [tenant, other] = await Promise.all([createTestTenant(config, { name: 'graphql tenant' }), createTestTenant(config)]);
  ({ bundleId } = await insertDeployment(config, tenant.tenantId, deploymentId));
});

afterAll(async () => {
  await app?.close();
  await Promise.allSettled([tenant?.cleanup(), other?.cleanup()]);
  await deleteQueues(config);
  await deleteEventKeys(config);
});

function codes(body: { errors?: { extensions?: Record<string, unknown> }[] }): unknown[] {
  return (body.errors ?? []).map((e) => e.extensions?.code);
}

describe('GraphQL over HTTP', () => {
  it('needs a valid API key, and answers UNAUTHENTICATED without one', async () => {
    for (const key of [undefined, 'weir_0123456789abcdef01234567_wrong', 'nonsense']) {
      const { body } = await gql(app.url, key, '{ tenant { id } }');
      expect(codes(body)).toEqual(['UNAUTHENTICATED']);
      expect(body.data ?? null).toBeNull();
    }
  });

  it("answers the caller's own tenant and the fleet", async () => {
    const { status, body } = await gql<{ tenant: { id: string; name: string; quotas: { maxDeployments: number } }; workers: { items: unknown[] } }>(
      app.url,
      tenant.readKey,
      '{ tenant { id name quotas { maxDeployments } } workers(limit: 5) { items { id status } nextCursor } }',
    );
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data?.tenant).toEqual({ id: tenant.tenantId, name: 'graphql tenant', quotas: { maxDeployments: 20 } });
    expect(Array.isArray(body.data?.workers.items)).toBe(true);
  });

  it('reads deployments through RLS: another tenant gets NOT_FOUND and an empty list', async () => {
    const query = 'query ($id: ID!) { deployment(id: $id) { id status desiredState metrics { subtasks } slos { id } } }';
    // D's ids are d + 24 hex; the test row's id is not, so the resolver's validation answers first.
    const invalid = await gql(app.url, tenant.readKey, query, { id: deploymentId });
    expect(codes(invalid.body)).toEqual(['BAD_USER_INPUT']);
    const foreign = await gql(app.url, other.readKey, query, { id: `d${'0'.repeat(24)}` });
    expect(codes(foreign.body)).toEqual(['NOT_FOUND']);
    const list = await gql<{ deployments: { items: { id: string }[] } }>(app.url, other.readKey, '{ deployments { items { id } nextCursor } }');
    expect(list.body.data?.deployments.items).toEqual([]);
    const own = await gql<{ deployments: { items: { id: string }[] } }>(app.url, tenant.readKey, '{ deployments { items { id status } } }');
    expect(own.body.data?.deployments.items.map((d) => d.id)).toEqual([deploymentId]);
  });

  it('lists bundles through RLS', async () => {
    const own = await gql<{ bundles: { items: { id: string; version: string }[] } }>(app.url, tenant.readKey, '{ bundles { items { id version } nextCursor } }');
    expect(own.body.data?.bundles.items).toEqual([{ id: bundleId, version: '1.0.0' }]);
    const foreignList = await gql<{ bundles: { items: unknown[] } }>(app.url, other.readKey, '{ bundles { items { id } } }');
    expect(foreignList.body.data?.bundles.items).toEqual([]);
    const foreign = await gql(app.url, other.readKey, 'query ($id: ID!) { bundle(id: $id) { id } }', { id: bundleId });
    expect(codes(foreign.body)).toEqual(['NOT_FOUND']);
    const foreignDelete = await gql(app.url, other.writeKey, 'mutation ($id: ID!) { deleteBundle(id: $id) }', { id: bundleId });
    expect(codes(foreignDelete.body)).toEqual(['NOT_FOUND']);
  });

  it('creates, reads and deletes SLOs; validates input as BAD_USER_INPUT naming arguments; needs the write scope', async () => {
    const create = `mutation ($input: CreateSloInput!) { createSlo(input: $input) { id name percentile thresholdMs target windowMinutes status { state compliance } } }`;
    const input = { name: 'checkout', deploymentId, thresholdMs: 500, target: 0.99 };

    const readOnly = await gql(app.url, tenant.readKey, create, { input });
    expect(codes(readOnly.body)).toEqual(['FORBIDDEN']);

    const bad = await gql(app.url, tenant.writeKey, create, { input: { ...input, target: 1.5, thresholdMs: -3, windowMinutes: 1 } });
    expect(codes(bad.body)).toEqual(['BAD_USER_INPUT']);
    const errors = (bad.body.errors?.[0].extensions?.errors ?? []) as { argument: string }[];
    expect(errors.map((e) => e.argument).sort()).toEqual(['target', 'thresholdMs', 'windowMinutes']);
    expect(JSON.stringify(bad.body)).not.toMatch(/stacktrace|\.ts:\d+/);

    const coercion = await gql(app.url, tenant.writeKey, create, { input: { ...input, target: 'high' } });
    expect(codes(coercion.body)).toEqual(['BAD_USER_INPUT']);

    const created = await gql<{ createSlo: { id: string; percentile: string; windowMinutes: number; status: { state: string } } }>(app.url, tenant.writeKey, create, { input });
    expect(created.body.errors).toBeUndefined();
    const slo = created.body.data!.createSlo;
    expect(slo).toMatchObject({ percentile: 'p99', windowMinutes: 60, status: { state: 'NO_DATA' } });

    const foreign = await gql(app.url, other.readKey, 'query ($id: ID!) { slo(id: $id) { id } }', { id: slo.id });
    expect(codes(foreign.body)).toEqual(['NOT_FOUND']);
    const foreignDelete = await gql(app.url, other.writeKey, 'mutation ($id: ID!) { deleteSlo(id: $id) }', { id: slo.id });
    expect(codes(foreignDelete.body)).toEqual(['NOT_FOUND']);

    const listed = await gql<{ slos: { items: { id: string }[] } }>(app.url, tenant.readKey, 'query ($d: ID) { slos(deploymentId: $d) { items { id } } }', { d: deploymentId });
    expect(listed.body.data?.slos.items.map((s) => s.id)).toEqual([slo.id]);

    const deleted = await gql<{ deleteSlo: boolean }>(app.url, tenant.writeKey, 'mutation ($id: ID!) { deleteSlo(id: $id) }', { id: slo.id });
    expect(deleted.body.data?.deleteSlo).toBe(true);
  });

  it('answers malformed documents and bad cursors without a stack trace', async () => {
    const malformed = await gql(app.url, tenant.readKey, '{ tenant { id ');
    expect(codes(malformed.body)).toEqual(['GRAPHQL_PARSE_FAILED']);
    const unknownField = await gql(app.url, tenant.readKey, '{ tenant { secret } }');
    expect(codes(unknownField.body)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    const cursor = await gql(app.url, tenant.readKey, '{ workers(cursor: "forged!") { items { id } } }');
    expect(codes(cursor.body)).toEqual(['BAD_USER_INPUT']);
    for (const body of [malformed.body, unknownField.body, cursor.body]) expect(JSON.stringify(body)).not.toMatch(/stacktrace|\.ts:\d+/);
  });
});

describe('GET /metrics', () => {
  it('serves process metrics and request durations by route pattern to the platform admin token only', async () => {
    await gql(app.url, tenant.readKey, '{ tenant { id } }');
    await fetch(`${app.url}/v1/slos/some-id`, { headers: { authorization: `Bearer ${tenant.readKey}` } });
    await fetch(`${app.url}/no/such/route`);
    expect((await fetch(`${app.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${tenant.readKey}` } })).status).toBe(401);
    const res = await fetch(`${app.url}/metrics`, { headers: adminHeaders() });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain('weir_control_plane_process_cpu_seconds_total');
    expect(text).toMatch(/weir_control_plane_http_request_duration_seconds_count\{method="POST",route="\/graphql",status="200"\} \d+/);
    expect(text).toMatch(/weir_control_plane_http_request_duration_seconds_count\{method="GET",route="\/v1\/slos\/:id",status="404"\} 1/);
    expect(text).toMatch(/weir_control_plane_http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} 1/);
    expect(text).not.toContain('some-id');
    expect(text).toContain('weir_control_plane_fleet_metrics_up 1');
  });
});

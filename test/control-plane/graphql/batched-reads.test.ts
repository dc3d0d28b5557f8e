/**
 * A page of deployments reads each of its per-deployment fields once for the page, not once per deployment
 * (graphql/loaders): a dashboard over 30 deployments answers exactly what the per-deployment reads answer, in a
 * number of SQL statements that does not grow with the page, and never with another tenant's rows.
 */
import { randomBytes } from 'node:crypto';
import type { PoolClient } from '@weir/db';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { toDeploymentMetrics } from '../../../apps/control-plane/src/metrics/deployment-metrics';
import { MetricsStore } from '../../../apps/control-plane/src/metrics/metrics-store';
import { TenantDb } from '../../../apps/control-plane/src/tenancy';
import { deleteQueues, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';
import { deleteEventKeys, gql, insertDeployments, insertRunHistory, snapshotOf } from './support';

const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });
let app: RunningControlPlane;
let tenant: TestTenant;
let other: TestTenant;
/** In id order, as the deployments query lists them. */
const ids = Array.from({ length: 30 }, () => `d${randomBytes(12).toString('hex')}`).sort();
const otherIds = Array.from({ length: 3 }, () => `d${randomBytes(12).toString('hex')}`).sort();

const POLICY = `deploymentId source updatedAt updatedBy
  partitioner { mode intervalMs moveBudget actAbove aimBelow coolDownMs maxMovePauseMs }
  autoscaler { mode intervalMs minParallelism maxParallelism targetUtilization scaleUpWindowMs scaleDownWindowMs cooldownMs catchUpMs sloFraction }`;
const FIELDS = `id name status
  metrics { deploymentId subtasks recordsInPerSec eventTimeLatency { samples p99 } heavyKeys { key count } }
  slos { id name deploymentId percentile thresholdMs target windowMinutes createdAt
    status { state evaluatedMinute goodMinutes badMinutes compliance burnRate burnRate5m errorBudgetRemaining } }
  scalingPolicy { ${POLICY} }
  scalingPolicyChanges(limit: 1) { items { changeId changedBy fields } nextCursor }
  keyGroupMoves(limit: 2) { items { moveId state failure } nextCursor }
  scalingDecisions(limit: 2) { items { decisionId kind } nextCursor }`;
const DASHBOARD = `query ($limit: Int) { deployments(limit: $limit) { items { ${FIELDS} } nextCursor } }`;
const ONE = `query ($id: ID!) { deployment(id: $id) { ${FIELDS} } }`;
/** The dashboard: each row's SLOs, latest metrics and scaling policy. */
const SUMMARY = 'query ($limit: Int) { deployments(limit: $limit) { items { id slos { id } metrics { subtasks } scalingPolicy { source } } } }';
const ONE_SUMMARY = 'query ($id: ID!) { deployment(id: $id) { id slos { id } metrics { subtasks } scalingPolicy { source } } }';

interface Item {
  id: string;
  metrics: { recordsInPerSec: number } | null;
  slos: { id: string }[];
  scalingPolicy: { source: string };
  scalingPolicyChanges: { items: { changeId: string }[]; nextCursor: string | null };
  keyGroupMoves: { items: { moveId: string }[]; nextCursor: string | null };
  scalingDecisions: { items: { decisionId: string }[]; nextCursor: string | null };
}

async function rest<T>(key: string, path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const res = await fetch(`${app.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${key}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
    ...(init.body ? { body: JSON.stringify(init.body) } : {}),
  });
  expect(res.status, `${init.method ?? 'GET'} ${path}`).toBeLessThan(300);
  return (await res.json()) as T;
}

/** SLOs, latest metrics, policy changes and run history on some of the deployments, each fixture on a different stride. */
async function populate(owner: TestTenant, deploymentIds: readonly string[], bundleIds: readonly string[]): Promise<void> {
  const metrics = app.app.get(MetricsStore);
  for (const [i, id] of deploymentIds.entries()) {
    for (let n = 0; n < i % 3; n++) {
      await rest(owner.writeKey, '/v1/slos', { method: 'POST', body: { name: `slo-${n}`, deploymentId: id, thresholdMs: 100 * (n + 1), target: 0.99 } });
    }
    if (i % 2 === 0) {
      const merged = toDeploymentMetrics([snapshotOf(owner.tenantId, id, { recordsInPerSec: 100 + i, latenciesMs: [i + 1, 2 * i + 1] })], Date.now());
      await metrics.saveLatest(owner.tenantId, id, JSON.stringify(merged), 600_000);
    }
    if (i % 4 === 0) {
      const path = `/v1/deployments/${id}/scaling-policy`;
      await rest(owner.writeKey, path, { method: 'PATCH', body: { partitioner: { intervalMs: 5_000 + i } } });
      await rest(owner.writeKey, path, { method: 'PATCH', body: { autoscaler: { targetUtilization: 0.5 } } });
    }
    if (i % 5 === 0) await insertRunHistory(config, owner.tenantId, id, bundleIds[i], 3);
  }
}

/**
 * Counts, from here on, the SQL statements TenantDb sends for `tenantId` (a read is one statement; a transaction is
 * BEGIN with the tenant, its statements, and COMMIT) and the Redis reads of its latest metrics. Other tenants'
 * statements (the control plane's own loops) are left out, so the figures are the request's alone.
 */
function countReads(tenantId: string): { statements: () => number; redis: () => number; restore: () => void } {
  const db = app.app.get(TenantDb);
  const redis = app.app.get(MetricsStore).redis;
  const [run, read, readWith, sendCommand] = [db.run.bind(db), db.read.bind(db), db.readWith.bind(db), redis.sendCommand.bind(redis)];
  let statements = 0;
  let redisReads = 0;
  const counted = (client: PoolClient): PoolClient =>
    new Proxy(client, {
      get: (target, prop, receiver) =>
        prop === 'query'
          ? (...args: Parameters<PoolClient['query']>) => {
              statements++;
              return (target.query as (...a: unknown[]) => unknown)(...args);
            }
          : Reflect.get(target, prop, receiver),
    });
  const spies = [
    vi.spyOn(db, 'read').mockImplementation((t, query) => {
      if (t === tenantId) statements++;
      return read(t, query);
    }),
    vi.spyOn(db, 'readWith').mockImplementation((t, fn) => {
      if (t === tenantId) statements++;
      return readWith(t, fn);
    }),
    vi.spyOn(db, 'run').mockImplementation((t, fn) => {
      if (t !== tenantId) return run(t, fn);
      statements += 2;
      return run(t, (client) => fn(counted(client)));
    }),
    vi.spyOn(redis, 'sendCommand').mockImplementation((command, stream) => {
      const { name, args } = command as unknown as { name: string; args: unknown[] };
      if ((name === 'get' || name === 'mget') && args.some((a) => String(a).includes(tenantId))) redisReads++;
      return sendCommand(command, stream);
    }),
  ];
  return { statements: () => statements, redis: () => redisReads, restore: () => spies.forEach((s) => s.mockRestore()) };
}

async function measured<T>(tenantId: string, fn: () => Promise<T>): Promise<{ result: T; statements: number; redis: number }> {
  const reads = countReads(tenantId);
  try {
    const result = await fn();
    return { result, statements: reads.statements(), redis: reads.redis() };
  } finally {
    reads.restore();
  }
}

beforeAll(async () => {
  app = await startControlPlane(config);
  [tenant, other] = await Promise.all([createTestTenant(config), createTestTenant(config)]);
  const [bundleIds, otherBundleIds] = await Promise.all([insertDeployments(config, tenant.tenantId, ids), insertDeployments(config, other.tenantId, otherIds)]);
  await populate(tenant, ids, bundleIds);
  await populate(other, otherIds, otherBundleIds);
}, 180_000);

afterAll(async () => {
  await app?.close();
  await Promise.allSettled([tenant?.cleanup(), other?.cleanup()]);
  await deleteQueues(config);
  await deleteEventKeys(config);
});

describe('GraphQL reads per page, not per deployment', () => {
  it('answers a page of 30 deployments as the per-deployment reads do, with none of another tenant', async () => {
    const page = await gql<{ deployments: { items: Item[]; nextCursor: string | null } }>(app.url, tenant.readKey, DASHBOARD, { limit: ids.length });
    expect(page.body.errors).toBeUndefined();
    const items = page.body.data!.deployments.items;
    expect(items.map((d) => d.id)).toEqual(ids);

    for (const item of items) {
      const one = await gql<{ deployment: Item }>(app.url, tenant.readKey, ONE, { id: item.id });
      expect(one.body.errors).toBeUndefined();
      expect(item).toEqual(one.body.data!.deployment);
      // REST reads through the services one deployment at a time, as the resolvers did before the loaders.
      const slos = await rest<{ items: unknown[] }>(tenant.readKey, `/v1/slos?deploymentId=${item.id}&limit=200`);
      expect(item.slos).toEqual(slos.items);
      expect(item.scalingPolicy).toEqual(await rest(tenant.readKey, `/v1/deployments/${item.id}/scaling-policy`));
      const changes = await rest<{ items: { changeId: string }[]; nextCursor: string | null }>(tenant.readKey, `/v1/deployments/${item.id}/scaling-policy/changes?limit=1`);
      expect(item.scalingPolicyChanges).toMatchObject({ items: changes.items.map((c) => ({ changeId: c.changeId })), nextCursor: changes.nextCursor });
      const moves = await rest<{ items: { moveId: string }[]; nextCursor: string | null }>(tenant.readKey, `/v1/deployments/${item.id}/key-group-moves?limit=2`);
      expect(item.keyGroupMoves).toMatchObject({ items: moves.items.map((m) => ({ moveId: m.moveId })), nextCursor: moves.nextCursor });
      const decisions = await rest<{ items: { decisionId: string }[]; nextCursor: string | null }>(tenant.readKey, `/v1/deployments/${item.id}/scaling-decisions?limit=2`);
      expect(item.scalingDecisions).toMatchObject({ items: decisions.items.map((d) => ({ decisionId: d.decisionId })), nextCursor: decisions.nextCursor });
    }

    // The fixture, so that the comparisons above compared something on every field.
    expect(items.map((d) => d.slos.length)).toEqual(ids.map((_, i) => i % 3));
    expect(items.map((d) => d.metrics?.recordsInPerSec ?? null)).toEqual(ids.map((_, i) => (i % 2 === 0 ? 100 + i : null)));
    expect(items.map((d) => d.scalingPolicy.source)).toEqual(ids.map((_, i) => (i % 4 === 0 ? 'api' : 'properties')));
    expect(items.map((d) => d.scalingPolicyChanges.nextCursor !== null)).toEqual(ids.map((_, i) => i % 4 === 0));
    expect(items.map((d) => d.keyGroupMoves.items.length)).toEqual(ids.map((_, i) => (i % 5 === 0 ? 2 : 0)));
    expect(items.map((d) => d.scalingDecisions.nextCursor !== null)).toEqual(ids.map((_, i) => i % 5 === 0));

    // Another tenant's deployments, SLOs, metrics and history never appear, and it sees only its own.
    const text = JSON.stringify(page.body);
    for (const id of otherIds) expect(text).not.toContain(id);
    const theirs = await gql<{ deployments: { items: Item[] } }>(app.url, other.readKey, DASHBOARD, { limit: ids.length });
    expect(theirs.body.errors).toBeUndefined();
    const theirItems = theirs.body.data!.deployments.items;
    expect(theirItems.map((d) => d.id)).toEqual(otherIds);
    const ownSloIds = new Set(items.flatMap((d) => d.slos.map((s) => s.id)));
    for (const d of theirItems) {
      expect(d.slos.every((s) => !ownSloIds.has(s.id))).toBe(true);
      expect(JSON.stringify(d)).not.toContain(tenant.tenantId);
    }
    expect(theirItems.map((d) => d.slos.length)).toEqual([0, 1, 2]);
  });

  it('reads a page in the same handful of statements whatever its size, where per-deployment reads take hundreds', async () => {
    await gql(app.url, tenant.readKey, '{ tenant { id } }'); // the API key is checked and cached before counting

    // Read one deployment at a time, this page took 181 statements and 30 Redis reads; the whole dashboard 541.
    const summary = await measured(tenant.tenantId, () => gql(app.url, tenant.readKey, SUMMARY, { limit: 30 }));
    expect(summary.result.body.errors).toBeUndefined();
    // The page (1), the SLOs (1), the scaling policies (one transaction: BEGIN, deployments, bundles, policies, COMMIT).
    expect(summary.statements).toBeLessThanOrEqual(7);
    expect(summary.redis).toBe(1);

    const small = await measured(tenant.tenantId, () => gql(app.url, tenant.readKey, DASHBOARD, { limit: 10 }));
    const large = await measured(tenant.tenantId, () => gql(app.url, tenant.readKey, DASHBOARD, { limit: 30 }));
    expect(small.result.body.errors).toBeUndefined();
    expect(large.result.body.errors).toBeUndefined();
    expect(large.statements).toBe(small.statements);
    // …and the three histories: one transaction each (BEGIN, the deployments that exist, the page of each, COMMIT).
    expect(large.statements).toBeLessThanOrEqual(7 + 3 * 4);
    expect(large.redis).toBe(1);

    // The counter sees per-deployment reads: thirty single-deployment queries read thirty times over.
    const singles = await measured(tenant.tenantId, () => Promise.all(ids.map((id) => gql(app.url, tenant.readKey, ONE_SUMMARY, { id }))));
    for (const { body } of singles.result) expect(body.errors).toBeUndefined();
    expect(singles.statements).toBeGreaterThanOrEqual(30 * 7);
    expect(singles.redis).toBe(30);
  });

  it('reads afresh for each mutation of a document: nothing one field read is kept for the next', async () => {
    const field = (alias: string, mode: string) =>
      `${alias}: setDeploymentAutoscalerMode(id: $id, mode: ${mode}) { scalingPolicy { autoscaler { mode } } }`;
    const { body } = await gql<Record<string, { scalingPolicy: { autoscaler: { mode: string } } }>>(
      app.url,
      tenant.writeKey,
      `mutation ($id: ID!) { ${field('first', 'recommend')} ${field('second', 'off')} }`,
      { id: ids[1] },
    );
    expect(body.errors).toBeUndefined();
    expect([body.data!.first.scalingPolicy.autoscaler.mode, body.data!.second.scalingPolicy.autoscaler.mode]).toEqual(['recommend', 'off']);
  });
});

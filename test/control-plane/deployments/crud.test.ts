/**
 * The deployments API against the real services, without workers: validation (4xx naming the field), quotas,
 * idempotency keys, pagination, tenant isolation, and upgrades recorded as pending. Deployments here are created
 * SUSPENDED (or stay STARTING) so nothing is dispatched.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteQueues, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';
import { api, buildJob, insertBundle, waitForStatus, wordCountSource, type Api } from './support';

describe('deployments API', () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });
  let home: string;
  let cp: RunningControlPlane;
  let tenant: TestTenant;
  let other: TestTenant;
  let small: TestTenant;
  let client: Api;
  let v1: string;
  let v2: string;
  let otherBundle: string;
  const suffix = randomBytes(3).toString('hex');

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'weir-deployments-'));
    [tenant, other, small] = await Promise.all([
      createTestTenant(config),
      createTestTenant(config),
      createTestTenant(config, { maxDeployments: 1, maxTotalParallelism: 4 }),
    ]);
    const job = await buildJob(home, wordCountSource(`t.${tenant.tenantId}.in`, `t.${tenant.tenantId}.out`));
    v1 = await insertBundle(config, tenant.tenantId, job, { version: '1.0.0' });
    v2 = await insertBundle(config, tenant.tenantId, job, { version: '2.0.0' });
    otherBundle = await insertBundle(config, other.tenantId, job);
    await insertBundle(config, small.tenantId, job);
    cp = await startControlPlane(config);
    client = api(() => cp.url, tenant.writeKey);
  });

  afterAll(async () => {
    await cp?.close();
    for (const t of [tenant, other, small]) await t?.cleanup();
    await deleteQueues(config);
    await rm(home, { recursive: true, force: true });
  });

  const create = (body: Record<string, unknown>, c: Api = client, headers?: Record<string, string>) =>
    c.post('/v1/deployments', { desiredState: 'SUSPENDED', ...body }, headers);

  it('creates a deployment by bundle name and version, with the manifest defaults', async () => {
    const res = await create({ name: `a-${suffix}`, bundle: { name: 'word-count', version: '1.0.0' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: `a-${suffix}`,
      bundleId: v1,
      parallelism: { default: 1, operators: {} },
      config: {},
      desiredState: 'SUSPENDED',
      runNo: 0,
      pendingUpgrade: null,
    });
    expect(res.body.id).toMatch(/^d[a-f0-9]{24}$/);
    const settled = await waitForStatus(client, res.body.id, 'SUSPENDED');
    expect(settled.statusReason).toBe('created with desired state SUSPENDED');
  });

  it.each([
    [{ bundleId: 'x' }, 'name', 'is required'],
    [{ name: 'Bad Name', bundleId: 'b' + '0'.repeat(24) }, 'name', 'must be 1-63'],
    [{ name: 'n' }, 'bundle', 'exactly one of'],
    [{ name: 'n', bundleId: 'b' + '0'.repeat(24), bundle: { name: 'word-count', version: '1.0.0' } }, 'bundle', 'exactly one of'],
    [{ name: 'n', bundle: { name: 'word-count' } }, 'bundle', 'must be { name, version } or { id }'],
    [{ name: 'n', bundleId: 'b' + '0'.repeat(24), parallelism: { default: 0 } }, 'parallelism.default', 'must be an integer'],
    [{ name: 'n', bundleId: 'b' + '0'.repeat(24), parallelism: 3 }, 'parallelism', 'must be an object'],
    [{ name: 'n', bundleId: 'b' + '0'.repeat(24), desiredState: 'CANCELLED' }, 'desiredState', 'RUNNING or SUSPENDED'],
    [{ name: 'n', bundleId: 'b' + '0'.repeat(24), config: { topics: { in: 'bad topic!' } } }, 'config.topics.in', 'Kafka topic name'],
    [{ name: 'n', bundleId: 'b' + '0'.repeat(24), extra: 1 }, 'extra', 'not a recognised parameter'],
  ])('rejects %j naming %s', async (body, field, reason) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ in: 'body', name: field, reason: expect.stringContaining(reason) })]));
  });

  it('rejects what only the bundle can tell: unknown bundle, unknown operator, too much parallelism, foreign topics', async () => {
    const unknown = await create({ name: 'n', bundle: { name: 'word-count', version: '9.9.9' } });
    expect(unknown.body.errors).toEqual([{ in: 'body', name: 'bundle', reason: 'no bundle word-count with version 9.9.9' }]);
    const foreign = await create({ name: 'n', bundleId: otherBundle });
    expect(foreign.status).toBe(400);
    expect(foreign.body.errors[0]).toMatchObject({ name: 'bundleId', reason: `no bundle ${otherBundle}` });

    const res = await create({
      name: 'n',
      bundleId: v1,
      parallelism: { default: 33, operators: { nope: 2, counts: 40 } },
      config: { topics: { in: `t.${tenant.tenantId}.in`, out: 'demo.views-per-user', sneaky: `t.${other.tenantId}.out` } },
    });
    expect(res.status).toBe(400);
    const fields = (res.body.errors as { name: string }[]).map((e) => e.name).sort();
    expect(fields).toEqual(['config.topics.out', 'config.topics.sneaky', 'parallelism.default', 'parallelism.operators.counts', 'parallelism.operators.nope']);
  });

  it('rejects deployment properties the workers could not use, naming each', async () => {
    for (const [property, value, reason] of [
      ['subtask.max-records-per-second', '0', 'must be a positive number of records per second'],
      ['subtask.max-records-per-second', 'fast', 'must be a positive number of records per second'],
      ['checkpoint.interval-ms', '10', 'must be an integer in [100, 86400000]'],
    ]) {
      const res = await create({ name: 'n', bundleId: v1, config: { properties: { [property]: value } } });
      expect(res.status, `${property}=${value}`).toBe(400);
      expect(res.body.errors).toEqual([{ in: 'body', name: `config.properties.${property}`, reason: expect.stringContaining(reason) }]);
    }
  });

  it('refuses a bundle whose manifest declares topics outside the tenant, or operator ids workers cannot take', async () => {
    const job = await buildJob(home, wordCountSource(`t.${tenant.tenantId}.in`, 'demo.out'));
    const leaky = await insertBundle(config, tenant.tenantId, job, { name: 'leaky', topics: [`t.${tenant.tenantId}.in`, 'demo.out'] });
    const res = await create({ name: `leaky-${suffix}`, bundleId: leaky });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ in: 'body', name: 'bundleId', reason: `the bundle uses topic "demo.out", outside "t.${tenant.tenantId}."` }]);

    const dotted = await insertBundle(config, tenant.tenantId, job, { name: 'dotted', operatorIds: ['words.v2', 'counts'] });
    const refused = await create({ name: `dotted-${suffix}`, bundleId: dotted });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toMatchObject({ name: 'bundleId', reason: expect.stringContaining('"words.v2"') });
  });

  it('answers 400 for a malformed id or cursor and 404 for an unknown or foreign deployment', async () => {
    expect((await client.get('/v1/deployments/nope')).body.errors[0]).toMatchObject({ in: 'path', name: 'id' });
    expect((await client.get('/v1/deployments?cursor=bogus!')).body.errors[0]).toMatchObject({ in: 'query', name: 'cursor' });
    expect((await client.get(`/v1/deployments/d${'0'.repeat(24)}`)).status).toBe(404);
    const theirs = await create({ name: `theirs-${suffix}`, bundleId: otherBundle }, api(() => cp.url, other.writeKey));
    expect(theirs.status).toBe(201);
    for (const res of [
      await client.get(`/v1/deployments/${theirs.body.id}`),
      await client.patch(`/v1/deployments/${theirs.body.id}`, { desiredState: 'CANCELLED' }),
      await client.get(`/v1/deployments/${theirs.body.id}/history`),
      await client.post(`/v1/deployments/${theirs.body.id}/upgrade`, { bundleId: v2, mode: 'stateless' }),
    ]) {
      expect(res.status).toBe(404);
    }
    const list = await client.get('/v1/deployments?limit=200');
    expect((list.body.items as { id: string }[]).map((d) => d.id)).not.toContain(theirs.body.id);
  });

  it('needs a key, and a write key to change anything', async () => {
    expect((await fetch(`${cp.url}/v1/deployments`)).status).toBe(401);
    const reader = api(() => cp.url, tenant.readKey);
    expect((await reader.get('/v1/deployments')).status).toBe(200);
    expect((await create({ name: 'n', bundleId: v1 }, reader)).status).toBe(403);
  });

  it('keeps names unique among live deployments, and frees a name on cancel', async () => {
    const name = `dup-${suffix}`;
    const first = await create({ name, bundleId: v1 });
    expect(first.status).toBe(201);
    const second = await create({ name, bundleId: v1 });
    expect(second.status).toBe(409);
    expect(second.body.detail).toContain(name);
    expect((await client.patch(`/v1/deployments/${first.body.id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
    await waitForStatus(client, first.body.id, 'CANCELLED');
    expect((await create({ name, bundleId: v1 })).status).toBe(201);
    expect((await client.patch(`/v1/deployments/${first.body.id}`, { desiredState: 'RUNNING' })).status).toBe(409);
  });

  it('replays a create sent again with the same Idempotency-Key', async () => {
    const headers = { 'idempotency-key': `create-${suffix}` };
    const first = await create({ name: `idem-${suffix}`, bundleId: v1 }, client, headers);
    const again = await create({ name: `idem-${suffix}`, bundleId: v1 }, client, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('enforces the deployment and parallelism quotas', async () => {
    const c = api(() => cp.url, small.writeKey);
    const wide = await create({ name: 'wide', bundle: { name: 'word-count', version: '1.0.0' }, parallelism: { default: 1, operators: { counts: 5 } } }, c);
    expect(wide.status).toBe(409);
    expect(wide.body.detail).toMatch(/maxTotalParallelism/);
    expect((await create({ name: 'one', bundle: { name: 'word-count', version: '1.0.0' } }, c)).status).toBe(201);
    const two = await create({ name: 'two', bundle: { name: 'word-count', version: '1.0.0' } }, c);
    expect(two.status).toBe(409);
    expect(two.body.detail).toMatch(/maxDeployments/);
  });

  it('pages the list with cursors, in creation order', async () => {
    const names = [0, 1, 2].map((i) => `page-${i}-${suffix}`);
    const ids: string[] = [];
    for (const name of names) ids.push((await create({ name, bundleId: v1 })).body.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await client.get(`/v1/deployments?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...(res.body.items as { id: string }[]).map((d) => d.id));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen.filter((id) => ids.includes(id))).toEqual(ids);
    expect([...seen].sort()).toEqual(seen);
  });

  it('records an upgrade as pending, validates it, and says plainly that no savepoint exists yet', async () => {
    const d = (await create({ name: `up-${suffix}`, bundleId: v1 })).body;
    await waitForStatus(client, d.id, 'SUSPENDED');
    const bad = await client.post(`/v1/deployments/${d.id}/upgrade`, { bundleId: v2, mode: 'snapshot' });
    expect(bad.body.errors[0]).toMatchObject({ name: 'mode', reason: expect.stringContaining('stateless, savepoint, last-state') });
    const same = await client.post(`/v1/deployments/${d.id}/upgrade`, { bundleId: v1, mode: 'stateless' });
    expect(same.body.errors[0]).toMatchObject({ name: 'bundleId', reason: expect.stringContaining('already runs') });

    const res = await client.post(`/v1/deployments/${d.id}/upgrade`, { bundle: { name: 'word-count', version: '2.0.0' }, mode: 'savepoint' });
    expect(res.status).toBe(202);
    expect(res.body.pendingUpgrade).toMatchObject({ bundleId: v2, mode: 'savepoint' });
    expect(res.body.bundleId).toBe(v1);

    // Suspended: the upgrade waits for the next start. Cancelled: it never happens.
    expect((await client.patch(`/v1/deployments/${d.id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
    await waitForStatus(client, d.id, 'CANCELLED');
    const history = await client.get(`/v1/deployments/${d.id}/history?limit=1`);
    expect(history.body.transitions).toHaveLength(1);
    expect(history.body.nextCursor).toEqual(expect.any(String));
    const rest = await client.get(`/v1/deployments/${d.id}/history?cursor=${history.body.nextCursor}`);
    expect([...history.body.transitions, ...rest.body.transitions].map((t: { to: string }) => t.to)).toEqual(['CREATED', 'SUSPENDED', 'CANCELLED']);
  });

  it('rejects bad patches naming the field', async () => {
    const d = (await create({ name: `patch-${suffix}`, bundleId: v1 })).body;
    const cases: [unknown, string][] = [
      [{}, 'desiredState'],
      [{ desiredState: 'PAUSED' }, 'desiredState'],
      [{ parallelism: { operators: { ghost: 1 } } }, 'parallelism.operators.ghost'],
    ];
    for (const [body, field] of cases) {
      const res = await client.patch(`/v1/deployments/${d.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors[0].name).toBe(field);
    }
    const rescale = await client.patch(`/v1/deployments/${d.id}`, { parallelism: { operators: { counts: 2 } } });
    expect(rescale.status).toBe(200);
    expect(rescale.body.pendingParallelism).toEqual({ default: 1, operators: { counts: 2 } });
  });
});

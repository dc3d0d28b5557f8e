/**
 * DELETE /v1/tenants/{id} against the real app, Postgres, S3 and Kafka: a tenant with a bundle (an S3 object), a
 * stopped deployment with a run, an SLO and topics under its prefixes is deleted whole, while another tenant with
 * the same kinds of things keeps every one; a deployment that could run refuses the deletion and changes nothing;
 * and a deletion that fails part-way (S3 unreachable) leaves the tenant marked with its keys revoked, and the next
 * DELETE finishes it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createBlobStore, type BlobStore } from '@weir/blob';
import { createPool, withTenant, type Pool } from '@weir/db';
import { createKafkaConnector, type KafkaAdmin, type KafkaConnector } from '@weir/kafka';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../../../apps/control-plane/src/pagination/cursor';
import { insertBundle } from '../deployments/support';
import {
  adminHeaders,
  closedPort,
  deleteQueues,
  readJson,
  startControlPlane,
  testConfig,
  uniquePrefix,
  type ProblemBody,
  type RunningControlPlane,
} from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';

const prefix = uniquePrefix();
const config = testConfig({ WEIR_QUEUE_PREFIX: prefix });

/** An id just before `id` in the list's order, so a page of one after it starts with `id`. */
function beforeId(id: string): string {
  return id.slice(0, -1);
}

interface Seeded {
  readonly tenant: TestTenant;
  readonly deploymentId: string;
  readonly topics: string[];
}

describe('deleting a tenant', () => {
  let cp: RunningControlPlane;
  let pool: Pool;
  let owner: Client;
  let blob: BlobStore;
  let connector: KafkaConnector;
  let kafka: KafkaAdmin;
  const tenants: TestTenant[] = [];
  const topics: string[] = [];

  const admin = (base: string, path: string, method = 'GET') => fetch(`${base}${path}`, { method, headers: adminHeaders() });
  const asTenant = (key: string, path: string) => fetch(`${cp.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const objects = async (tenantId: string) => {
    const keys: string[] = [];
    for await (const o of blob.list(`tenants/${tenantId}/`)) keys.push(o.key);
    return keys;
  };
  const rowCounts = async (tenantId: string) => {
    const counts: Record<string, number> = {};
    for (const table of ['tenants', 'api_keys', 'bundles', 'deployments', 'deployment_runs', 'slos']) {
      const column = table === 'tenants' ? 'id' : 'tenant_id';
      const { rows } = await owner.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1`, [tenantId]);
      counts[table] = rows[0].n;
    }
    return counts;
  };

  /** A tenant with a bundle on S3, a deployment in `status`/`desired` (with an ended run), an SLO and two topics. */
  async function seed(status = 'CANCELLED', desired = 'CANCELLED'): Promise<Seeded> {
    const tenant = await createTestTenant(config);
    tenants.push(tenant);
    const code = Buffer.from(`export default ${randomBytes(4).toString('hex')};`);
    const bundleId = await insertBundle(config, tenant.tenantId, { code, sha256: createHash('sha256').update(code).digest('hex') });
    const deploymentId = `d${randomBytes(8).toString('hex')}`;
    await withTenant(pool, tenant.tenantId, async (client) => {
      // Not due (next_reconcile_at NULL): no reconciler of any installation looks at it.
      await client.query(
        `INSERT INTO deployments (tenant_id, id, name, bundle_id, parallelism, desired_state, status, run_no, next_reconcile_at)
         VALUES ($1, $2, 'job', $3, '{"default":1,"operators":{}}', $4, $5, 1, NULL)`,
        [tenant.tenantId, deploymentId, bundleId, desired, status],
      );
      await client.query(
        `INSERT INTO deployment_runs (tenant_id, deployment_id, run_no, worker_id, bundle_id, subtasks, slots, started_reason, ended_at, outcome)
         VALUES ($1, $2, 1, 'w-test', $3, '[]', 1, 'test', now(), 'STOPPED')`,
        [tenant.tenantId, deploymentId, bundleId],
      );
      await client.query(
        `INSERT INTO slos (tenant_id, id, name, deployment_id, percentile, threshold_ms, target, window_minutes)
         VALUES ($1, $2, 'latency', $3, 'p99', 100, 0.99, 60)`,
        [tenant.tenantId, `s${randomBytes(8).toString('hex')}`, deploymentId],
      );
    });
    const own = [`t.${tenant.tenantId}.in`, `weir.${tenant.tenantId}.${deploymentId}.dead-letters`];
    await kafka.ensureTopics(own.map((topic) => ({ topic, partitions: 1 })));
    topics.push(...own);
    return { tenant, deploymentId, topics: own };
  }

  async function expectIntact(s: Seeded): Promise<void> {
    expect((await asTenant(s.tenant.writeKey, '/v1/tenant')).status).toBe(200);
    expect(await objects(s.tenant.tenantId)).toHaveLength(1);
    const all = await kafka.listTopics();
    for (const topic of s.topics) expect(all).toContain(topic);
    expect(await rowCounts(s.tenant.tenantId)).toEqual({ tenants: 1, api_keys: 2, bundles: 1, deployments: 1, deployment_runs: 1, slos: 1 });
  }

  async function expectGone(s: Seeded): Promise<void> {
    expect((await asTenant(s.tenant.writeKey, '/v1/tenant')).status).toBe(401);
    expect((await admin(cp.url, `/v1/tenants/${s.tenant.tenantId}`)).status).toBe(404);
    expect(await objects(s.tenant.tenantId)).toEqual([]);
    const all = await kafka.listTopics();
    for (const topic of s.topics) expect(all).not.toContain(topic);
    expect(await rowCounts(s.tenant.tenantId)).toEqual({ tenants: 0, api_keys: 0, bundles: 0, deployments: 0, deployment_runs: 0, slos: 0 });
  }

  beforeAll(async () => {
    cp = await startControlPlane(config);
    pool = createPool({ connectionString: config.WEIR_PG_URL, max: 2 });
    owner = new Client({ connectionString: config.WEIR_PG_OWNER_URL });
    await owner.connect();
    blob = createBlobStore(config);
    connector = createKafkaConnector({ brokers: config.WEIR_KAFKA_BROKERS, clientId: 'tenant-deletion-test' });
    kafka = connector.admin();
  });

  afterAll(async () => {
    await kafka?.deleteTopics(topics);
    await kafka?.close();
    for (const t of tenants) await t.cleanup();
    blob?.close();
    await owner?.end();
    await pool?.end();
    await cp?.close();
    await deleteQueues(config);
  });

  it("deletes the tenant's objects, topics, keys and rows, and nothing of another tenant's", async () => {
    const doomed = await seed();
    const other = await seed('SUSPENDED', 'SUSPENDED');
    await expectIntact(doomed);

    const res = await admin(cp.url, `/v1/tenants/${doomed.tenant.tenantId}`, 'DELETE');
    expect(res.status).toBe(204);
    await expectGone(doomed);
    await expectIntact(other);

    expect((await admin(cp.url, `/v1/tenants/${doomed.tenant.tenantId}`, 'DELETE')).status).toBe(404);
  });

  it('refuses while a deployment could run, naming it, and changes nothing', async () => {
    const live = await seed('SUSPENDED', 'RUNNING');
    const res = await admin(cp.url, `/v1/tenants/${live.tenant.tenantId}`, 'DELETE');
    expect(res.status).toBe(409);
    const problem = await readJson<ProblemBody>(res);
    expect(problem.type).toBe('urn:weir:problem:tenant-has-live-deployments');
    expect(problem.detail).toContain(`${live.deploymentId} (status SUSPENDED, desired RUNNING)`);
    await expectIntact(live);
    const tenant = await readJson<{ deletingSince: string | null }>(await admin(cp.url, `/v1/tenants/${live.tenant.tenantId}`));
    expect(tenant.deletingSince).toBeNull();
  });

  it('resumes a deletion that failed part-way: marked and revoked at once, finished by the next DELETE', async () => {
    const s = await seed();
    // Used once here, so this instance caches the key: the broadcast must be what drops it.
    expect((await asTenant(s.tenant.writeKey, '/v1/tenant')).status).toBe(200);
    // Another instance of the same installation whose object storage is unreachable.
    const broken = await startControlPlane(testConfig({ WEIR_QUEUE_PREFIX: prefix, WEIR_S3_ENDPOINT: `http://127.0.0.1:${await closedPort()}` }));
    try {
      const res = await admin(broken.url, `/v1/tenants/${s.tenant.tenantId}`, 'DELETE');
      expect(res.status).toBe(503);
      expect((await readJson<ProblemBody>(res)).detail).toMatch(/send the DELETE again/);
    } finally {
      await broken.close();
    }
    const marked = await readJson<{ deletingSince: string | null }>(await admin(cp.url, `/v1/tenants/${s.tenant.tenantId}`));
    expect(marked.deletingSince).not.toBeNull();
    const listed = await readJson<{ items: { id: string; deletingSince: string | null }[] }>(await admin(cp.url, `/v1/tenants?limit=1&cursor=${encodeCursor(beforeId(s.tenant.tenantId))}`));
    expect(listed.items.find((t) => t.id === s.tenant.tenantId)?.deletingSince).toBe(marked.deletingSince);
    expect((await asTenant(s.tenant.writeKey, '/v1/tenant')).status).toBe(401);
    expect((await fetch(`${cp.url}/v1/tenants/${s.tenant.tenantId}/api-keys`, {
      method: 'POST',
      headers: adminHeaders({ 'content-type': 'application/json' }),
      body: JSON.stringify({ name: 'late', scope: 'write' }),
    })).status).toBe(409);
    expect(await objects(s.tenant.tenantId)).toHaveLength(1);

    expect((await admin(cp.url, `/v1/tenants/${s.tenant.tenantId}`, 'DELETE')).status).toBe(204);
    await expectGone(s);
  });
});

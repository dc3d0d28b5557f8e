import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { createBlobStore, type BlobStore } from '@weir/blob';
import { createPool, withTenant, type Pool } from '@weir/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJson, startControlPlane, testConfig, uniquePrefix, type PageBody, type ProblemBody, type RunningControlPlane } from '../support/control-plane';
import { jobSource } from '../support/job-source';
import { createTestTenant, type TestTenant } from '../support/tenants';

interface BundleBody {
  id: string;
  name: string;
  version: string;
  sha256: string;
  sizeBytes: number;
  manifest: Record<string, unknown>;
}

const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });

function manifest(overrides: Record<string, unknown> = {}) {
  return {
    name: 'fraud-detector',
    version: '1.0.0',
    entryPoint: 'job.js',
    operatorIds: ['source', 'score', 'sink'],
    rulesSchema: { type: 'object', properties: { threshold: { type: 'number' } }, required: ['threshold'] },
    defaultParallelism: 2,
    maxParallelism: 128,
    slo: { objectiveMs: 500, percentile: 99, windowMinutes: 60, target: 0.99 },
    ...overrides,
  };
}

/** A bundle whose job is what manifest() says (operator ids source, score, sink; maxParallelism 128). */
const job = (extra: { sizeBytes?: number; variant?: string; rulesSchema?: Record<string, unknown> } = {}) =>
  jobSource({ operatorIds: ['source', 'score', 'sink'], maxParallelism: 128, ...extra });
/** What the job declares: the manifest's schema (above) with one more rule. */
const JOB_RULES_SCHEMA = { type: 'object', properties: { threshold: { type: 'number', minimum: 0 } }, required: ['threshold'] };

function form(parts: [string, string | Buffer][]): FormData {
  const body = new FormData();
  for (const [name, value] of parts) {
    if (typeof value === 'string') body.append(name, value);
    else body.append(name, new Blob([value]), 'job.js');
  }
  return body;
}

async function objectsUnder(blob: BlobStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of blob.list(prefix)) keys.push(o.key);
  return keys;
}

async function readObject(blob: BlobStore, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await blob.get(key)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('bundles', () => {
  let cp: RunningControlPlane;
  let a: TestTenant;
  let b: TestTenant;
  let small: TestTenant;
  let blob: BlobStore;
  let pool: Pool;

  const upload = (tenant: TestTenant, body: FormData | string, headers: Record<string, string> = {}, token = tenant.writeKey) =>
    fetch(`${cp.url}/v1/bundles`, { method: 'POST', body, headers: { authorization: `Bearer ${token}`, ...headers } });
  const get = (tenant: TestTenant, path: string, init: RequestInit = {}) =>
    fetch(`${cp.url}${path}`, { ...init, headers: { authorization: `Bearer ${tenant.writeKey}` } });
  const rowCount = (tenant: TestTenant) =>
    withTenant(pool, tenant.tenantId, async (c) => Number((await c.query('SELECT count(*) AS n FROM bundles')).rows[0].n));

  beforeAll(async () => {
    cp = await startControlPlane(config);
    [a, b, small] = await Promise.all([createTestTenant(config), createTestTenant(config), createTestTenant(config, { maxBundleBytes: 1024 })]);
    blob = createBlobStore(config);
    pool = createPool({ connectionString: config.WEIR_PG_URL, max: 2 });
  });
  afterAll(async () => {
    await cp?.close();
    await Promise.all([a?.cleanup(), b?.cleanup(), small?.cleanup()]);
    blob?.close();
    await pool?.end();
  });

  it('streams a bundle to S3 under the tenant prefix with its sha256 and size, and reads it back', async () => {
    const code = job({ variant: randomBytes(3000).toString('base64') });
    const res = await upload(a, form([['manifest', JSON.stringify(manifest())], ['bundle', code]]));
    expect(res.status).toBe(201);
    const bundle = await readJson<BundleBody>(res);
    const sha256 = createHash('sha256').update(code).digest('hex');
    expect(bundle).toMatchObject({ name: 'fraud-detector', version: '1.0.0', sha256, sizeBytes: code.length });
    expect(bundle.manifest).toEqual(manifest());

    const key = `tenants/${a.tenantId}/bundles/fraud-detector/1.0.0/${sha256}.js`;
    expect(await objectsUnder(blob, `tenants/${a.tenantId}/`)).toEqual([key]);
    expect((await readObject(blob, key)).equals(code)).toBe(true);

    expect(await readJson<BundleBody>(await get(a, `/v1/bundles/${bundle.id}`))).toEqual(bundle);
    expect(await readJson<BundleBody>(await get(a, '/v1/bundles/fraud-detector/versions/1.0.0'))).toEqual(bundle);
    const list = await readJson<PageBody<BundleBody>>(await get(a, '/v1/bundles'));
    expect(list.items.map((i) => i.id)).toEqual([bundle.id]);
  });

  it('refuses a second upload of the same version (409) and keeps the first', async () => {
    const res = await upload(a, form([['manifest', JSON.stringify(manifest())], ['bundle', Buffer.from('other code')]]));
    expect(res.status).toBe(409);
    expect((await readJson<ProblemBody>(res)).type).toBe('urn:weir:problem:bundle-version-exists');
    expect(await rowCount(a)).toBe(1);
    expect(await objectsUnder(blob, `tenants/${a.tenantId}/`)).toHaveLength(1);
  });

  it('cuts off an oversized upload with 413 and keeps nothing', async () => {
    const res = await upload(small, form([['manifest', JSON.stringify(manifest())], ['bundle', randomBytes(64 * 1024)]]));
    expect(res.status).toBe(413);
    const problem = await readJson<ProblemBody>(res);
    expect(problem.type).toBe('urn:weir:problem:quota-exceeded');
    expect(problem.detail).toContain('maxBundleBytes');
    expect(problem.detail).toContain('1024');
    expect(await rowCount(small)).toBe(0);
    expect(await objectsUnder(blob, `tenants/${small.tenantId}/`)).toEqual([]);
    // A body whose Content-Length alone is too large is refused before it is read.
    const huge = await upload(small, form([['manifest', JSON.stringify(manifest())], ['bundle', randomBytes(2 * 1024 * 1024)]]));
    expect(huge.status).toBe(413);
    expect(await objectsUnder(blob, `tenants/${small.tenantId}/`)).toEqual([]);
    // Exactly the limit is accepted.
    expect((await upload(small, form([['manifest', JSON.stringify(manifest())], ['bundle', job({ sizeBytes: 1024 })]]))).status).toBe(201);
  });

  it('cuts off a multipart-sized upload past the limit and leaves no parts or objects', async () => {
    const medium = await createTestTenant(config, { maxBundleBytes: 9 * 1024 * 1024 });
    try {
      const res = await upload(medium, form([['manifest', JSON.stringify(manifest())], ['bundle', randomBytes(10 * 1024 * 1024)]]));
      expect(res.status).toBe(413);
      expect(await rowCount(medium)).toBe(0);
      expect(await objectsUnder(blob, `tenants/${medium.tenantId}/`)).toEqual([]);
    } finally {
      await medium.cleanup();
    }
  });

  it.each([
    ['a manifest field that is invalid', () => form([['manifest', JSON.stringify(manifest({ version: 'v1' }))], ['bundle', Buffer.from('x')]]), 'manifest.version'],
    ['a rules schema that does not compile', () => form([['manifest', JSON.stringify(manifest({ rulesSchema: { type: 'objekt' } }))], ['bundle', Buffer.from('x')]]), 'manifest.rulesSchema'],
    ['a manifest that is not JSON', () => form([['manifest', '{"name":'], ['bundle', Buffer.from('x')]]), 'manifest'],
    ['no bundle part', () => form([['manifest', JSON.stringify(manifest())]]), 'bundle'],
    ['no manifest', () => form([['bundle', Buffer.from('x')]]), 'manifest'],
    ['the file before the manifest', () => form([['bundle', Buffer.from('x')], ['manifest', JSON.stringify(manifest())]]), 'manifest'],
    ['an unknown part', () => form([['manifest', JSON.stringify(manifest())], ['extra', 'x']]), 'extra'],
    ['a JSON body', () => JSON.stringify(manifest()), 'Content-Type'],
  ])('answers %s with 400 naming it and stores nothing', async (_what, body, field) => {
    const res = await upload(b, body(), typeof body() === 'string' ? { 'content-type': 'application/json' } : {});
    expect(res.status).toBe(400);
    const problem = await readJson<ProblemBody>(res);
    expect(problem.errors!.map((e) => e.name)).toContain(field);
    expect(await rowCount(b)).toBe(0);
    expect(await objectsUnder(blob, `tenants/${b.tenantId}/`)).toEqual([]);
  });

  it.each([
    ['operator ids the job does not have', { operatorIds: ['source', 'scorer', 'sink'] }, job(), 'manifest.operatorIds', `lists "scorer", which the job does not have and leaves out "score": the job's operator ids are ["source","score","sink"]`],
    ['another maxParallelism', { maxParallelism: 64 }, job(), 'manifest.maxParallelism', "is 64, but the job's is 128"],
    ['a rules schema that is not the one the job declares', {}, job({ rulesSchema: JOB_RULES_SCHEMA }), 'manifest.rulesSchema', `is not the rules schema the job declares (rulesSchema() in its definition, built with its properties' defaults), which is ${JSON.stringify(JOB_RULES_SCHEMA)}`],
    ['a file that exports no job', {}, Buffer.from('module.exports = 1;'), 'bundle', 'the bundle must export a job definition'],
    ['a file that is not JavaScript', {}, randomBytes(512), 'bundle', 'the bundle is not valid JavaScript'],
    ['a bundle that loops forever as it loads', {}, Buffer.from(`for (;;) {}\n${job()}`), 'bundle', 'the bundle ran for more than 2000 ms as it loaded'],
    ['a bundle that starts a process as it loads', {}, Buffer.from(`require('node:child_process').execSync('id');\n${job()}`), 'bundle', 'require("node:child_process").execSync is not available'],
  ])('checks the manifest against the code: refuses %s with 400 naming it, and stores nothing', async (_what, overrides, code, field, reason) => {
    const res = await upload(b, form([['manifest', JSON.stringify(manifest({ version: '5.0.0', ...overrides }))], ['bundle', code]]));
    expect(res.status).toBe(400);
    const problem = await readJson<ProblemBody>(res);
    expect(problem.errors!.find((e) => e.name === field)?.reason).toContain(reason);
    expect(await rowCount(b)).toBe(0);
    expect(await objectsUnder(blob, `tenants/${b.tenantId}/`)).toEqual([]);
  });

  it("takes a manifest whose rules schema is the job's own, whatever the order of its keys", async () => {
    const reordered = { required: ['threshold'], properties: { threshold: { minimum: 0, type: 'number' } }, type: 'object' };
    const res = await upload(b, form([['manifest', JSON.stringify(manifest({ version: '5.1.0', rulesSchema: reordered }))], ['bundle', job({ rulesSchema: JOB_RULES_SCHEMA })]]));
    expect(res.status).toBe(201);
    // Tenant b is expected empty by the tests after this one.
    const { id } = await readJson<BundleBody>(res);
    expect((await get(b, `/v1/bundles/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await rowCount(b)).toBe(0);
  });

  it('answers a truncated multipart body with 400', async () => {
    const boundary = 'weirboundary';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="manifest"\r\n\r\n${JSON.stringify(manifest())}\r\n--${boundary}\r\nContent-Disposition: form-data; name="bundle"; filename="job.js"\r\n\r\nmodule.exports = 1;`;
    const res = await upload(b, body, { 'content-type': `multipart/form-data; boundary=${boundary}` });
    expect(res.status).toBe(400);
    expect(await rowCount(b)).toBe(0);
    expect(await objectsUnder(blob, `tenants/${b.tenantId}/`)).toEqual([]);
  });

  it('keeps nothing when the client goes away mid-upload', async () => {
    const gone = await createTestTenant(config);
    try {
      const boundary = 'weirboundary';
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="manifest"\r\n\r\n${JSON.stringify(manifest())}\r\n--${boundary}\r\nContent-Disposition: form-data; name="bundle"; filename="job.js"\r\n\r\n`;
      const req = request(`${cp.url}/v1/bundles`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gone.writeKey}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + 10 * 1024 * 1024) },
      });
      req.on('error', () => undefined);
      req.write(head);
      req.write(randomBytes(256 * 1024));
      // Let the server start streaming the part (a pause, not an assertion), then hang up mid-body.
      await new Promise((r) => setTimeout(r, 300));
      req.destroy();
      // The abort removes the staging object and never records a row; give a late upload time to show up.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await objectsUnder(blob, `tenants/${gone.tenantId}/`)).toEqual([]);
      expect(await rowCount(gone)).toBe(0);
    } finally {
      await gone.cleanup();
    }
  });

  it('replays an upload under the same Idempotency-Key and refuses other bytes under it (422)', async () => {
    const code = job({ variant: 'idempotent' });
    const idem = { 'idempotency-key': randomBytes(8).toString('hex') };
    const m = JSON.stringify(manifest({ version: '2.0.0' }));
    const first = await upload(a, form([['manifest', m], ['bundle', code]]), idem);
    const again = await upload(a, form([['manifest', m], ['bundle', code]]), idem);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await readJson<BundleBody>(again)).toEqual(await readJson<BundleBody>(first));
    const other = await upload(a, form([['manifest', m], ['bundle', job({ variant: 'different' })]]), idem);
    expect(other.status).toBe(422);
    expect(await rowCount(a)).toBe(2);
    expect((await objectsUnder(blob, `tenants/${a.tenantId}/`)).filter((k) => k.includes('/2.0.0/'))).toHaveLength(1);
  });

  it("answers every bundle endpoint with another tenant's ids with 404 and changes nothing", async () => {
    const mine = (await readJson<PageBody<BundleBody>>(await get(a, '/v1/bundles'))).items[0];
    expect((await get(b, `/v1/bundles/${mine.id}`)).status).toBe(404);
    expect((await get(b, `/v1/bundles/${mine.name}/versions/${mine.version}`)).status).toBe(404);
    expect((await get(b, `/v1/bundles/${mine.id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await readJson<PageBody<BundleBody>>(await get(b, '/v1/bundles'))).items).toEqual([]);
    expect((await get(a, `/v1/bundles/${mine.id}`)).status).toBe(200);
  });

  it('row-level security: as the application role with tenant A set, SELECT * FROM bundles sees none of B', async () => {
    expect((await upload(b, form([['manifest', JSON.stringify(manifest())], ['bundle', job({ variant: 'b' })]]))).status).toBe(201);
    const seen = await withTenant(pool, a.tenantId, async (c) => (await c.query<{ tenant_id: string }>('SELECT * FROM bundles')).rows);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((r) => r.tenant_id === a.tenantId)).toBe(true);
    const keys = await withTenant(pool, a.tenantId, async (c) => (await c.query<{ tenant_id: string }>('SELECT * FROM api_keys')).rows);
    expect(keys.every((r) => r.tenant_id === a.tenantId)).toBe(true);
    // Without a tenant the application role sees nothing at all, and cannot write into another tenant.
    expect((await pool.query('SELECT * FROM bundles')).rowCount).toBe(0);
    await expect(
      withTenant(pool, a.tenantId, (c) =>
        c.query("INSERT INTO bundles (id, tenant_id, name, version, sha256, size_bytes, s3_key, manifest) VALUES ($1, $2, 'x', '1.0.0', $3, 1, 'k', '{}')", [
          `b${'0'.repeat(24)}`,
          b.tenantId,
          '0'.repeat(64),
        ]),
      ),
    ).rejects.toThrow(/row-level security/);
  });

  it('lets a read key list but not upload (403), and pages the list', async () => {
    expect((await upload(a, form([['manifest', JSON.stringify(manifest({ version: '3.0.0' }))], ['bundle', Buffer.from('x')]]), {}, a.readKey)).status).toBe(403);
    const read = await fetch(`${cp.url}/v1/bundles?limit=1`, { headers: { authorization: `Bearer ${a.readKey}` } });
    const page = await readJson<PageBody<BundleBody>>(read);
    expect(page.items).toHaveLength(1);
    const next = await readJson<PageBody<BundleBody>>(await get(a, `/v1/bundles?limit=1&cursor=${page.nextCursor}`));
    expect(next.items.map((i) => i.version)).toEqual(['2.0.0']);
    expect(next.nextCursor).toBeNull();
    expect((await get(a, '/v1/bundles?name=Bad_Name')).status).toBe(400);
  });

  it('refuses to delete a bundle a deployment uses (409) and keeps row and object', async () => {
    const v1 = await readJson<BundleBody>(await get(a, '/v1/bundles/fraud-detector/versions/1.0.0'));
    // A suspended deployment nobody reconciles: enough to hold a reference (deployments.bundle_id REFERENCES bundles).
    await withTenant(pool, a.tenantId, (c) =>
      c.query(
        `INSERT INTO deployments (tenant_id, id, name, bundle_id, parallelism, desired_state, next_reconcile_at)
         VALUES ($1, $2, 'holder', $3, '{"default": 1}', 'SUSPENDED', NULL)`,
        [a.tenantId, `d${randomBytes(8).toString('hex')}`, v1.id],
      ),
    );
    const res = await get(a, `/v1/bundles/${v1.id}`, { method: 'DELETE' });
    expect(res.status).toBe(409);
    expect((await readJson<ProblemBody>(res)).type).toBe('urn:weir:problem:bundle-in-use');
    expect((await get(a, `/v1/bundles/${v1.id}`)).status).toBe(200);
    expect((await objectsUnder(blob, `tenants/${a.tenantId}/`)).filter((k) => k.includes('/1.0.0/'))).toHaveLength(1);
  });

  it('deletes a bundle: row and object', async () => {
    const v2 = await readJson<BundleBody>(await get(a, '/v1/bundles/fraud-detector/versions/2.0.0'));
    expect((await get(a, `/v1/bundles/${v2.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await get(a, `/v1/bundles/${v2.id}`)).status).toBe(404);
    expect((await objectsUnder(blob, `tenants/${a.tenantId}/`)).filter((k) => k.includes('/2.0.0/'))).toEqual([]);
  });
});

describe('bundles when S3 fails', () => {
  it('answers 503 and records nothing', async () => {
    const broken = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_S3_BUCKET: `weir-missing-${randomBytes(4).toString('hex')}` });
    const cp = await startControlPlane(broken);
    const tenant = await createTestTenant(config);
    const pool = createPool({ connectionString: config.WEIR_PG_URL, max: 1 });
    try {
      const res = await fetch(`${cp.url}/v1/bundles`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.writeKey}` },
        body: form([['manifest', JSON.stringify(manifest())], ['bundle', Buffer.from('x')]]),
      });
      expect(res.status).toBe(503);
      const rows = await withTenant(pool, tenant.tenantId, (c) => c.query('SELECT 1 FROM bundles'));
      expect(rows.rowCount).toBe(0);
    } finally {
      await cp.close();
      await tenant.cleanup();
      await pool.end();
    }
  });
});

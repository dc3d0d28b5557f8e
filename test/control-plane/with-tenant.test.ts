import { createPool, DatabaseError, InvalidTenantIdError, queryAsTenant, withTenant, type Pool } from '@weir/db';
import { Pool as PlainPool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from './support/control-plane';
import { createTestTenant } from './support/tenants';

describe('withTenant', () => {
  let pool: Pool;
  const tenantSetting = (client: { query: Pool['query'] }) =>
    client.query<{ t: string | null }>("SELECT current_setting('app.tenant_id', true) AS t").then((r) => r.rows[0].t);

  beforeAll(async () => {
    // One connection, so every call below reuses the same session: a leaked setting would be visible.
    pool = createPool({ connectionString: testConfig().WEIR_PG_URL, max: 1 });
    await pool.query('CREATE TEMP TABLE tenant_probe (tenant text NOT NULL)');
  });
  afterAll(async () => {
    await pool.end();
  });

  it('sets app.tenant_id for the transaction only, as the application role', async () => {
    const seen = await withTenant(pool, 'tenant-a', async (client) => ({
      tenant: await tenantSetting(client),
      role: (await client.query<{ r: string }>('SELECT current_user AS r')).rows[0].r,
    }));
    expect(seen).toEqual({ tenant: 'tenant-a', role: 'weir_app' });
    expect(await tenantSetting(pool) ?? '').toBe('');
  });

  it('commits what fn wrote and rolls back when fn throws', async () => {
    await withTenant(pool, 'tenant-a', (c) => c.query("INSERT INTO tenant_probe VALUES (current_setting('app.tenant_id'))"));
    const boom = new Error('boom');
    await expect(
      withTenant(pool, 'tenant-b', async (c) => {
        await c.query("INSERT INTO tenant_probe VALUES (current_setting('app.tenant_id'))");
        throw boom;
      }),
    ).rejects.toBe(boom);
    const rows = await pool.query<{ tenant: string }>('SELECT tenant FROM tenant_probe');
    expect(rows.rows.map((r) => r.tenant)).toEqual(['tenant-a']);
  });

  it('refuses a tenant id that is not an identifier before touching the database', async () => {
    for (const bad of ['', "x'; DROP TABLE workers; --", 'a'.repeat(65)]) {
      await expect(withTenant(pool, bad, async () => 1)).rejects.toBeInstanceOf(InvalidTenantIdError);
    }
  });

  describe('queryAsTenant (one read, one round trip, one implicit transaction)', () => {
    it('runs the statement with app.tenant_id set, in a read-only transaction that ends with it', async () => {
      const { rows } = await queryAsTenant<{ t: string; ro: string; tx: boolean }>(pool, 'tenant-r', {
        text: "SELECT current_setting('app.tenant_id', true) AS t, current_setting('transaction_read_only') AS ro, now() = statement_timestamp() AS tx",
      });
      expect(rows).toEqual([{ t: 'tenant-r', ro: 'on', tx: false }]);
      expect((await tenantSetting(pool)) ?? '').toBe('');
      expect((await pool.query<{ s: string }>("SELECT current_setting('transaction_read_only') AS s")).rows[0].s).toBe('off');
    });

    it('takes parameters and named statements, and gives each tenant its own setting on one connection', async () => {
      const q = (tenant: string) =>
        queryAsTenant<{ t: string; x: number }>(pool, tenant, { name: 'probe-tenant', text: "SELECT current_setting('app.tenant_id') AS t, $1::int AS x", values: [7] });
      const seen = await Promise.all(['t-1', 't-2', 't-3'].map(q));
      expect(seen.map((r) => r.rows[0])).toEqual([{ t: 't-1', x: 7 }, { t: 't-2', x: 7 }, { t: 't-3', x: 7 }]);
    });

    it('throws the statement error, refuses writes, and leaves the connection usable', async () => {
      await expect(queryAsTenant(pool, 'tenant-r', { text: 'SELECT * FROM no_such_table' })).rejects.toMatchObject({ code: '42P01' });
      // (A temporary table would accept the write: Postgres lets read-only transactions write those.)
      await expect(queryAsTenant(pool, 'tenant-r', { text: 'CREATE TABLE sneaky_write (x int)' })).rejects.toMatchObject({ code: '25006' });
      expect((await queryAsTenant<{ t: string }>(pool, 'tenant-s', { text: "SELECT current_setting('app.tenant_id') AS t" })).rows[0].t).toBe('tenant-s');
    });

    it('prepares its tenant statement again on a connection whose first read failed before or after it', async () => {
      const fresh = createPool({ connectionString: testConfig().WEIR_PG_URL, max: 1 });
      try {
        // A statement that does not parse: Postgres skips the rest up to Sync, so the tenant statement is not prepared.
        await expect(queryAsTenant(fresh, 'tenant-f', { name: 'broken', text: 'SELEC 1' })).rejects.toMatchObject({ code: '42601' });
        expect((await queryAsTenant(fresh, 'tenant-g', { name: 'probe-after', text: "SELECT current_setting('app.tenant_id') AS t" })).rows).toEqual([{ t: 'tenant-g' }]);
        // A statement that fails as it runs, after the tenant statement completed.
        await expect(queryAsTenant(fresh, 'tenant-h', { text: 'SELECT 1 / 0' })).rejects.toMatchObject({ code: '22012' });
        expect((await queryAsTenant<{ t: string }>(fresh, 'tenant-i', { name: 'probe-after', text: "SELECT current_setting('app.tenant_id') AS t" })).rows).toEqual([{ t: 'tenant-i' }]);
        expect((await tenantSetting(fresh)) ?? '').toBe('');
      } finally {
        await fresh.end();
      }
    });

    it('binds row-level security: without the tenant the app role sees no rows, with it only that tenant\'s', async () => {
      const config = testConfig();
      const [a, b] = await Promise.all([createTestTenant(config), createTestTenant(config)]);
      try {
        const ids = (rows: { tenant_id: string }[]) => [...new Set(rows.map((r) => r.tenant_id))];
        const keys = { text: 'SELECT tenant_id FROM api_keys WHERE tenant_id = ANY($1)', values: [[a.tenantId, b.tenantId]] };
        expect((await pool.query<{ tenant_id: string }>(keys)).rows).toEqual([]);
        expect(ids((await queryAsTenant<{ tenant_id: string }>(pool, a.tenantId, keys)).rows)).toEqual([a.tenantId]);
        expect(ids((await queryAsTenant<{ tenant_id: string }>(pool, b.tenantId, { name: 'rls-keys', ...keys })).rows)).toEqual([b.tenantId]);
        expect((await queryAsTenant(pool, 'nobody', { name: 'rls-keys', ...keys })).rows).toEqual([]);
      } finally {
        await Promise.all([a.cleanup(), b.cleanup()]);
      }
    });

    it('fails a read whose parameter cannot be sent without disturbing the reads around it', async () => {
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      const q = (tenant: string) => queryAsTenant<{ t: string }>(pool, tenant, { text: "SELECT current_setting('app.tenant_id') AS t" });
      const results = await Promise.allSettled([q('u-1'), queryAsTenant(pool, 'u-2', { text: 'SELECT $1::jsonb', values: [circular] }), q('u-3')]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.rows[0].t] : []))).toEqual(['u-1', 'u-3']);
      expect((await q('u-4')).rows[0].t).toBe('u-4');
    });

    it('refuses a bad tenant id before touching the database', async () => {
      await expect(queryAsTenant(pool, "x'; --", { text: 'SELECT 1' })).rejects.toBeInstanceOf(InvalidTenantIdError);
    });

    it('works the same on a pool without pipelining', async () => {
      const plain = new PlainPool({ connectionString: testConfig().WEIR_PG_URL, max: 1 });
      try {
        const { rows } = await queryAsTenant<{ t: string }>(plain, 'tenant-p', { text: "SELECT current_setting('app.tenant_id') AS t" });
        expect(rows[0].t).toBe('tenant-p');
        await expect(queryAsTenant(plain, 'tenant-p', { text: 'SELECT * FROM no_such_table' })).rejects.not.toBeInstanceOf(DatabaseError);
      } finally {
        await plain.end();
      }
    });
  });
});

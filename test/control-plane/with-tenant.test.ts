import { createPool, DatabaseError, InvalidTenantIdError, queryAsTenant, withTenant, type Pool } from '@weir/db';
import { Pool as PlainPool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from './support/control-plane';

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

  describe('queryAsTenant (one read in one round trip)', () => {
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

    it('refuses a bad tenant id before touching the database', async () => {
      await expect(queryAsTenant(pool, "x'; --", { text: 'SELECT 1' })).rejects.toBeInstanceOf(InvalidTenantIdError);
    });

    it('works on a pool without pipelining, through an ordinary transaction', async () => {
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

import { createPool, InvalidTenantIdError, withTenant, type Pool } from '@weir/db';
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
});

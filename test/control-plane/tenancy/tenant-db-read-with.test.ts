import { createPool, DatabaseError, type Pool } from '@weir/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuotaService, TenantDb } from '../../../apps/control-plane/src/tenancy';
import { SecondStatementError } from '../../../apps/control-plane/src/tenancy/tenant-db';
import { testConfig } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';

const config = testConfig();

describe('TenantDb.readWith (a repository read of one statement as one tenant read)', () => {
  let pool: Pool;
  let db: TenantDb;
  let tenant: TestTenant;
  let other: TestTenant;

  beforeAll(async () => {
    pool = createPool({ connectionString: config.WEIR_PG_URL, max: 4 });
    db = new TenantDb(pool);
    [tenant, other] = await Promise.all([createTestTenant(config, { maxDeployments: 3 }), createTestTenant(config)]);
  });
  afterAll(async () => {
    await pool?.end();
    await Promise.all([tenant?.cleanup(), other?.cleanup()]);
  });

  it("reads the tenant's own rows under RLS, and another tenant's as missing", async () => {
    const quotas = new QuotaService();
    expect(await db.readWith(tenant.tenantId, (c) => quotas.quotasOf(c, tenant.tenantId))).toMatchObject({ maxDeployments: 3 });
    await expect(db.readWith(tenant.tenantId, (c) => quotas.quotasOf(c, other.tenantId))).rejects.toMatchObject({ status: 404 });
    // Text and values as pg takes them, rowCount included.
    const result = await db.readWith(tenant.tenantId, (c) => c.query<{ t: string }>("SELECT current_setting('app.tenant_id') AS t, $1::int AS n", [7]));
    expect(result).toMatchObject({ rowCount: 1, rows: [{ t: tenant.tenantId, n: 7 }] });
  });

  it('refuses a second statement and a write', async () => {
    await expect(
      db.readWith(tenant.tenantId, async (c) => {
        await c.query('SELECT 1');
        return c.query('SELECT 2');
      }),
    ).rejects.toBeInstanceOf(SecondStatementError);
    const write = db.readWith(tenant.tenantId, (c) => c.query("UPDATE tenants SET name = 'changed' WHERE id = $1", [tenant.tenantId]));
    await expect(write).rejects.toBeInstanceOf(DatabaseError);
    await expect(write).rejects.toMatchObject({ code: '25006' });
  });
});

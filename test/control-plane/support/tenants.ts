import { createBlobStore } from '@weir/blob';
import type { WeirConfig } from '@weir/config';
import { createPool, withTenant } from '@weir/db';
import { Client } from 'pg';
import { generateApiKey } from '../../../apps/control-plane/src/tenancy/api-key-format';
import { newTenantId } from '../../../apps/control-plane/src/tenancy/tenant';

export interface TestTenantOverrides {
  readonly name?: string;
  readonly maxDeployments?: number;
  readonly maxTotalParallelism?: number;
  readonly maxBundleBytes?: number;
}

export interface TestTenant {
  readonly tenantId: string;
  /** `Authorization: Bearer <writeKey>`: a key with the write scope (reads too). */
  readonly writeKey: string;
  readonly readKey: string;
  /** Removes the tenant with every row of every tenant-owned table, and its S3 objects under tenants/<id>/. */
  cleanup(): Promise<void>;
}

/**
 * A fresh tenant with one write and one read key, written straight to Postgres as the application role (through
 * RLS, as the API would). Tests that need the HTTP bootstrap use POST /v1/tenants instead.
 */
export async function createTestTenant(config: WeirConfig, overrides: TestTenantOverrides = {}): Promise<TestTenant> {
  const tenantId = newTenantId();
  const write = generateApiKey();
  const read = generateApiKey();
  const pool = createPool({ connectionString: config.WEIR_PG_URL, max: 1, applicationName: 'weir-test-tenants' });
  try {
    await withTenant(pool, tenantId, async (client) => {
      await client.query(
        `INSERT INTO tenants (id, name, max_deployments, max_total_parallelism, max_bundle_bytes)
         VALUES ($1, $2, COALESCE($3, 20), COALESCE($4, 64), COALESCE($5::bigint, 52428800))`,
        [tenantId, overrides.name ?? `test ${tenantId}`, overrides.maxDeployments ?? null, overrides.maxTotalParallelism ?? null, overrides.maxBundleBytes ?? null],
      );
      for (const [key, scope] of [[write, 'write'], [read, 'read']] as const) {
        await client.query('INSERT INTO api_keys (id, tenant_id, name, scope, secret_sha256) VALUES ($1, $2, $3, $4, $5)', [
          key.keyId,
          tenantId,
          `test ${scope}`,
          scope,
          key.secretSha256,
        ]);
      }
    });
  } finally {
    await pool.end();
  }
  return { tenantId, writeKey: write.token, readKey: read.token, cleanup: () => deleteTenant(config, tenantId) };
}

/**
 * Deletes as the owner role (RLS does not bind the owner): every table with a tenant_id column, whoever added it,
 * in whatever order foreign keys allow, then the tenant itself.
 */
export async function deleteTenant(config: WeirConfig, tenantId: string): Promise<void> {
  const owner = new Client({ connectionString: config.WEIR_PG_OWNER_URL });
  await owner.connect();
  try {
    const tables = (
      await owner.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'tenant_id'",
      )
    ).rows.map((r) => r.table_name);
    let remaining = tables;
    for (let round = 0; remaining.length && round <= tables.length; round++) {
      const failed: string[] = [];
      for (const table of remaining) {
        try {
          await owner.query(`DELETE FROM "${table.replace(/"/g, '""')}" WHERE tenant_id = $1`, [tenantId]);
        } catch (err) {
          if ((err as { code?: string }).code !== '23503') throw err;
          failed.push(table);
        }
      }
      remaining = failed;
    }
    if (remaining.length) throw new Error(`could not delete tenant ${tenantId}'s rows from ${remaining.join(', ')}`);
    await owner.query('DELETE FROM tenants WHERE id = $1', [tenantId]);
  } finally {
    await owner.end();
  }
  const blob = createBlobStore(config);
  try {
    for await (const object of blob.list(`tenants/${tenantId}/`)) await blob.delete(object.key);
  } finally {
    blob.close();
  }
}

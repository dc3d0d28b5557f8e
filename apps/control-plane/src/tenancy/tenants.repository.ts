import { Injectable } from '@nestjs/common';
import type { PoolClient } from '@weir/db';
import type { TenantQuotas } from './quotas';
import type { Tenant, TenantPatch } from './tenant';
import type { TenantDb } from './tenant-db';

export interface TenantRow {
  id: string;
  name: string;
  max_deployments: number;
  max_total_parallelism: number;
  max_bundle_bytes: string;
  created_at: Date;
  deleting_since: Date | null;
}

/** A tenant's columns, as toTenant reads them: the admin's list (TenantDirectory) selects the same. */
export const TENANT_COLUMNS = 'id, name, max_deployments, max_total_parallelism, max_bundle_bytes, created_at, deleting_since';
const FIND = { name: 'tenants.find', text: `SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = $1` };

/** SQL of `tenants`. Runs inside TenantDb.run(<that tenant>): the row is visible to its own tenant only. */
@Injectable()
export class TenantsRepository {
  /** Quotas left out take the table's defaults. */
  async insert(client: PoolClient, id: string, name: string, quotas: Partial<TenantQuotas>): Promise<Tenant> {
    const { rows } = await client.query<TenantRow>(
      `INSERT INTO tenants (id, name, max_deployments, max_total_parallelism, max_bundle_bytes)
       VALUES ($1, $2, COALESCE($3, 20), COALESCE($4, 64), COALESCE($5::bigint, 52428800))
       RETURNING ${TENANT_COLUMNS}`,
      [id, name, quotas.maxDeployments ?? null, quotas.maxTotalParallelism ?? null, quotas.maxBundleBytes ?? null],
    );
    return toTenant(rows[0]);
  }

  /**
   * Changes what the patch names, leaves the rest; null when there is no such tenant. An UPDATE that changes no key
   * column locks the row FOR NO KEY UPDATE, the lock QuotaService.lockQuotas takes: a patch and a concurrent quota
   * check of the same tenant queue behind each other, so a deploy is checked against the quotas before the patch or
   * after it, never a mix; foreign keys' KEY SHARE locks (the tenant's other writers) do not wait for it.
   */
  async update(client: PoolClient, id: string, patch: TenantPatch): Promise<Tenant | null> {
    const { rows } = await client.query<TenantRow>(
      `UPDATE tenants SET
         name = COALESCE($2, name),
         max_deployments = COALESCE($3, max_deployments),
         max_total_parallelism = COALESCE($4, max_total_parallelism),
         max_bundle_bytes = COALESCE($5::bigint, max_bundle_bytes)
       WHERE id = $1
       RETURNING ${TENANT_COLUMNS}`,
      [id, patch.name ?? null, patch.quotas?.maxDeployments ?? null, patch.quotas?.maxTotalParallelism ?? null, patch.quotas?.maxBundleBytes ?? null],
    );
    return rows.length ? toTenant(rows[0]) : null;
  }

  /** `find` as a read of its own, in one round trip (TenantDb.read): GET /v1/tenant and GraphQL's `tenant`. */
  async read(db: TenantDb, id: string): Promise<Tenant | null> {
    const rows = await db.read<TenantRow>(id, { ...FIND, values: [id] });
    return rows.length ? toTenant(rows[0]) : null;
  }
}

export function toTenant(row: TenantRow): Tenant {
  return {
    id: row.id,
    name: row.name,
    quotas: {
      maxDeployments: row.max_deployments,
      maxTotalParallelism: row.max_total_parallelism,
      maxBundleBytes: Number(row.max_bundle_bytes),
    },
    createdAt: row.created_at,
    deletingSince: row.deleting_since,
  };
}

import { Injectable } from '@nestjs/common';
import type { PoolClient } from '@weir/db';
import type { TenantQuotas } from './quotas';
import type { Tenant } from './tenant';
import type { TenantDb } from './tenant-db';

interface TenantRow {
  id: string;
  name: string;
  max_deployments: number;
  max_total_parallelism: number;
  max_bundle_bytes: string;
  created_at: Date;
}

const COLUMNS = 'id, name, max_deployments, max_total_parallelism, max_bundle_bytes, created_at';
const FIND = { name: 'tenants.find', text: `SELECT ${COLUMNS} FROM tenants WHERE id = $1` };

/** SQL of `tenants`. Runs inside TenantDb.run(<that tenant>): the row is visible to its own tenant only. */
@Injectable()
export class TenantsRepository {
  /** Quotas left out take the table's defaults. */
  async insert(client: PoolClient, id: string, name: string, quotas: Partial<TenantQuotas>): Promise<Tenant> {
    const { rows } = await client.query<TenantRow>(
      `INSERT INTO tenants (id, name, max_deployments, max_total_parallelism, max_bundle_bytes)
       VALUES ($1, $2, COALESCE($3, 20), COALESCE($4, 64), COALESCE($5::bigint, 52428800))
       RETURNING ${COLUMNS}`,
      [id, name, quotas.maxDeployments ?? null, quotas.maxTotalParallelism ?? null, quotas.maxBundleBytes ?? null],
    );
    return toTenant(rows[0]);
  }

  async find(client: PoolClient, id: string): Promise<Tenant | null> {
    const { rows } = await client.query<TenantRow>({ ...FIND, values: [id] });
    return rows.length ? toTenant(rows[0]) : null;
  }

  /** `find` as a read of its own, in one round trip (TenantDb.read): GET /v1/tenant and GraphQL's `tenant`. */
  async read(db: TenantDb, id: string): Promise<Tenant | null> {
    const rows = await db.read<TenantRow>(id, { ...FIND, values: [id] });
    return rows.length ? toTenant(rows[0]) : null;
  }
}

function toTenant(row: TenantRow): Tenant {
  return {
    id: row.id,
    name: row.name,
    quotas: {
      maxDeployments: row.max_deployments,
      maxTotalParallelism: row.max_total_parallelism,
      maxBundleBytes: Number(row.max_bundle_bytes),
    },
    createdAt: row.created_at,
  };
}

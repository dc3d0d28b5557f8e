import { Injectable } from '@nestjs/common';
import type { PoolClient, SqlClient } from '@weir/db';
import { BundleInUseProblem, BundleVersionExistsProblem } from './bundle.problems';
import type { Bundle } from './bundle';
import type { BundleManifest } from './manifest';

interface BundleRow {
  id: string;
  tenant_id: string;
  name: string;
  version: string;
  sha256: string;
  size_bytes: string;
  s3_key: string;
  manifest: BundleManifest;
  created_at: Date;
}

const COLUMNS = 'id, tenant_id, name, version, sha256, size_bytes, s3_key, manifest, created_at';

/**
 * SQL of `bundles`, inside TenantDb.run(tenantId) or, for a read of one statement, TenantDb.readWith; every statement
 * names the tenant, RLS is the backstop.
 */
@Injectable()
export class BundlesRepository {
  async exists(client: SqlClient, tenantId: string, name: string, version: string): Promise<boolean> {
    const { rowCount } = await client.query('SELECT 1 FROM bundles WHERE tenant_id = $1 AND name = $2 AND version = $3', [tenantId, name, version]);
    return rowCount === 1;
  }

  /** BundleVersionExistsProblem when (tenant, name, version) is taken, even by a concurrent upload. */
  async insert(client: PoolClient, bundle: Omit<Bundle, 'createdAt'>): Promise<Bundle> {
    try {
      const { rows } = await client.query<BundleRow>(
        `INSERT INTO bundles (id, tenant_id, name, version, sha256, size_bytes, s3_key, manifest)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
        [bundle.id, bundle.tenantId, bundle.name, bundle.version, bundle.sha256, bundle.sizeBytes, bundle.s3Key, JSON.stringify(bundle.manifest)],
      );
      return toBundle(rows[0]);
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new BundleVersionExistsProblem(bundle.name, bundle.version);
      throw err;
    }
  }

  /** Up to `limit` bundles in (name, version) order after `after`, optionally of one name. */
  async list(client: SqlClient, tenantId: string, limit: number, after: readonly [string, string] | undefined, name: string | undefined): Promise<Bundle[]> {
    const { rows } = await client.query<BundleRow>(
      `SELECT ${COLUMNS} FROM bundles
       WHERE tenant_id = $1 AND ($2::text IS NULL OR (name COLLATE "C", version COLLATE "C") > ($2, $3))
         AND ($4::text IS NULL OR name = $4)
       ORDER BY name COLLATE "C", version COLLATE "C" LIMIT $5`,
      [tenantId, after?.[0] ?? null, after?.[1] ?? null, name ?? null, limit],
    );
    return rows.map(toBundle);
  }

  async findById(client: SqlClient, tenantId: string, id: string): Promise<Bundle | null> {
    const { rows } = await client.query<BundleRow>(`SELECT ${COLUMNS} FROM bundles WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
    return rows.length ? toBundle(rows[0]) : null;
  }

  async findByVersion(client: SqlClient, tenantId: string, name: string, version: string): Promise<Bundle | null> {
    const { rows } = await client.query<BundleRow>(`SELECT ${COLUMNS} FROM bundles WHERE tenant_id = $1 AND name = $2 AND version = $3`, [
      tenantId,
      name,
      version,
    ]);
    return rows.length ? toBundle(rows[0]) : null;
  }

  /**
   * The deleted bundle, or null when there is none. Deployments reference bundles(id) ON DELETE RESTRICT, so a
   * bundle in use fails here (BundleInUseProblem) whatever races with it.
   */
  async delete(client: PoolClient, tenantId: string, id: string): Promise<Bundle | null> {
    try {
      const { rows } = await client.query<BundleRow>(`DELETE FROM bundles WHERE tenant_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [tenantId, id]);
      return rows.length ? toBundle(rows[0]) : null;
    } catch (err) {
      if ((err as { code?: string }).code === '23503') throw new BundleInUseProblem(id);
      throw err;
    }
  }
}

function toBundle(row: BundleRow): Bundle {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    version: row.version,
    sha256: row.sha256,
    sizeBytes: Number(row.size_bytes),
    s3Key: row.s3_key,
    manifest: row.manifest,
    createdAt: row.created_at,
  };
}

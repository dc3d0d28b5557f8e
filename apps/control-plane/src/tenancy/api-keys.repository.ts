import { Injectable } from '@nestjs/common';
import type { PoolClient, SqlClient } from '@weir/db';
import type { Scope } from './principal';
import type { ApiKey } from './tenant';

interface ApiKeyRow {
  id: string;
  tenant_id: string;
  name: string;
  scope: Scope;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

const COLUMNS = 'id, tenant_id, name, scope, created_at, revoked_at, last_used_at';

/**
 * SQL of `api_keys`, inside TenantDb.run(tenantId) (the list: TenantDb.readWith). Every statement names the tenant as well: RLS is the backstop,
 * not the filter. The secret hash is written here and read only by api_key_for_authentication; last_used_at is read
 * here and written only by api_keys_mark_used (ApiKeyUsage).
 */
@Injectable()
export class ApiKeysRepository {
  async insert(
    client: PoolClient,
    key: { id: string; tenantId: string; name: string; scope: Scope; secretSha256: Buffer },
  ): Promise<ApiKey> {
    const { rows } = await client.query<ApiKeyRow>(
      `INSERT INTO api_keys (id, tenant_id, name, scope, secret_sha256) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
      [key.id, key.tenantId, key.name, key.scope, key.secretSha256],
    );
    return toApiKey(rows[0]);
  }

  /** Up to `limit` keys (revoked ones included, with revokedAt) in id order, after `afterId`. */
  async list(client: SqlClient, tenantId: string, limit: number, afterId: string | undefined): Promise<ApiKey[]> {
    const { rows } = await client.query<ApiKeyRow>(
      `SELECT ${COLUMNS} FROM api_keys WHERE tenant_id = $1 AND ($2::text IS NULL OR id > $2) ORDER BY id LIMIT $3`,
      [tenantId, afterId ?? null, limit],
    );
    return rows.map(toApiKey);
  }

  /** The key, revoked now unless it already was; null when the tenant has no such key. */
  async revoke(client: PoolClient, tenantId: string, id: string): Promise<ApiKey | null> {
    const { rows } = await client.query<ApiKeyRow>(
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE tenant_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [tenantId, id],
    );
    return rows.length ? toApiKey(rows[0]) : null;
  }
}

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    scope: row.scope,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  };
}

import { Injectable } from '@nestjs/common';
import type { PoolClient } from '@weir/db';

export interface StoredResponse {
  readonly fingerprint: string;
  readonly state: 'pending' | 'done';
  readonly statusCode: number | null;
  readonly response: unknown;
}

/** How long a response is replayed. */
export const IDEMPOTENCY_TTL_HOURS = 24;
/** A pending claim older than this belongs to a request that died with its instance: the key may be used again. */
export const PENDING_CLAIM_STALE_SECONDS = 300;

/** SQL of `idempotency_keys`, inside TenantDb.run(scope). */
@Injectable()
export class IdempotencyRepository {
  /**
   * Claims the key for a new request: true when this request owns it now (no record, an expired one, or a stale
   * pending one), false when a live record exists. Concurrent claimers of one key serialise on its primary key.
   */
  async claim(client: PoolClient, scope: string, key: string, fingerprint: string): Promise<boolean> {
    const { rowCount } = await client.query(
      `INSERT INTO idempotency_keys AS i (tenant_id, key, fingerprint, state, expires_at)
       VALUES ($1, $2, $3, 'pending', now() + make_interval(hours => $4))
       ON CONFLICT (tenant_id, key) DO UPDATE
         SET fingerprint = EXCLUDED.fingerprint, state = 'pending', status_code = NULL, response = NULL,
             created_at = now(), expires_at = EXCLUDED.expires_at
         WHERE i.expires_at < now() OR (i.state = 'pending' AND i.created_at < now() - make_interval(secs => $5))`,
      [scope, key, fingerprint, IDEMPOTENCY_TTL_HOURS, PENDING_CLAIM_STALE_SECONDS],
    );
    return rowCount === 1;
  }

  async find(client: PoolClient, scope: string, key: string): Promise<StoredResponse | null> {
    const { rows } = await client.query<{ fingerprint: string; state: 'pending' | 'done'; status_code: number | null; response: unknown }>(
      'SELECT fingerprint, state, status_code, response FROM idempotency_keys WHERE tenant_id = $1 AND key = $2',
      [scope, key],
    );
    if (!rows.length) return null;
    return { fingerprint: rows[0].fingerprint, state: rows[0].state, statusCode: rows[0].status_code, response: rows[0].response };
  }

  async complete(client: PoolClient, scope: string, key: string, fingerprint: string, statusCode: number, response: unknown): Promise<void> {
    await client.query(
      `UPDATE idempotency_keys SET state = 'done', status_code = $4, response = $5::jsonb
       WHERE tenant_id = $1 AND key = $2 AND fingerprint = $3 AND state = 'pending'`,
      [scope, key, fingerprint, statusCode, JSON.stringify(response ?? null)],
    );
  }

  async release(client: PoolClient, scope: string, key: string, fingerprint: string): Promise<void> {
    await client.query(
      "DELETE FROM idempotency_keys WHERE tenant_id = $1 AND key = $2 AND fingerprint = $3 AND state = 'pending'",
      [scope, key, fingerprint],
    );
  }
}

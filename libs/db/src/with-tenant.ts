import type { Pool, PoolClient } from 'pg';
import { InvalidTenantIdError, toDatabaseError } from './errors';

/** Tenant ids are opaque, but short and printable: anything else is a bug upstream, caught before SQL. */
const TENANT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Runs `fn` in a transaction whose `app.tenant_id` setting names the tenant. Row-level security policies read
 * that setting (`current_setting('app.tenant_id')`), so a query that forgets its tenant filter still sees only
 * this tenant's rows. The setting is transaction-local (set_config(..., true)): it cannot leak to the next user
 * of the pooled connection. Commits when `fn` resolves, rolls back when it throws, and rethrows fn's error as is.
 */
export async function withTenant<T>(pool: Pool, tenantId: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  if (!TENANT_ID.test(tenantId)) throw new InvalidTenantIdError(`invalid tenant id ${JSON.stringify(tenantId)}`);
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw toDatabaseError(err, 'connect');
  }
  let broken: Error | undefined;
  try {
    try {
      await client.query('BEGIN');
      await client.query("SELECT set_config('app.tenant_id', $1, true)", [tenantId]);
    } catch (err) {
      throw toDatabaseError(err, 'begin tenant transaction');
    }
    const result = await fn(client);
    try {
      await client.query('COMMIT');
    } catch (err) {
      throw toDatabaseError(err, 'commit');
    }
    return result;
  } catch (err) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      // The connection is unusable: destroy it rather than hand it to the next caller mid-transaction.
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    }
    throw err;
  } finally {
    client.release(broken);
  }
}

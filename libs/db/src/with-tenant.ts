import type { Pool, PoolClient } from 'pg';
import { InvalidTenantIdError } from './errors';
import { withTransaction } from './transaction';

/** Tenant ids are opaque, but short and printable: anything else is a bug upstream, caught before SQL. */
const TENANT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Runs `fn` in a transaction whose `app.tenant_id` setting names the tenant. Row-level security policies read
 * that setting (`current_setting('app.tenant_id')`), so a query that forgets its tenant filter still sees only
 * this tenant's rows. The setting is transaction-local (set_config(..., true)): it cannot leak to the next user
 * of the pooled connection. Commits when `fn` resolves, rolls back when it throws, and rethrows fn's error as is.
 */
export function withTenant<T>(pool: Pool, tenantId: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  let statements: string;
  try {
    statements = beginTenantStatements(tenantId);
  } catch (err) {
    return Promise.reject(err);
  }
  return withTransaction(pool, fn, statements);
}

/**
 * The statement that sets the tenant for the current transaction, sent in the same round trip as BEGIN. Throws
 * InvalidTenantIdError for an id that is not an identifier: it matched TENANT_ID (letters, digits, _ and -), so it
 * is safe as a literal.
 */
export function beginTenantStatements(tenantId: string): string {
  assertTenantId(tenantId);
  return `SELECT set_config('app.tenant_id', '${tenantId}', true)`;
}

/** Throws InvalidTenantIdError unless the id matches TENANT_ID. */
export function assertTenantId(tenantId: string): void {
  if (!TENANT_ID.test(tenantId)) throw new InvalidTenantIdError(`invalid tenant id ${JSON.stringify(tenantId)}`);
}

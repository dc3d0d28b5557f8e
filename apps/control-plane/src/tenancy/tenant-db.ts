import { HttpException, Inject, Injectable } from '@nestjs/common';
import { TenantReads, toDatabaseError, withTenant, type Pool, type PoolClient, type QueryConfig, type QueryResult, type QueryResultRow, type SqlClient } from '@weir/db';
import { PG_POOL } from '../infrastructure/tokens';
import { ProblemException } from '../problems/problem.exception';

/**
 * The only way tenant data is reached: a transaction on the application-role pool whose app.tenant_id names the
 * tenant, so row-level security filters every statement in `fn` (a query that forgets `WHERE tenant_id` still sees
 * nothing foreign). Driver errors thrown by `fn` leave as DatabaseError (unavailability → 503); the caller's own
 * typed errors pass through unchanged.
 */
@Injectable()
export class TenantDb {
  private readonly reads: TenantReads;

  constructor(@Inject(PG_POOL) private readonly pool: Pool) {
    this.reads = new TenantReads(pool, READ_LANES);
  }

  async run<T>(tenantId: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
    try {
      return await withTenant(this.pool, tenantId, fn);
    } catch (err) {
      throw isDriverError(err) ? toDatabaseError(err, `tenant ${tenantId} transaction`) : err;
    }
  }

  /**
   * One read-only statement under the same guarantees as `run`, in one exchange instead of three round trips,
   * pipelined with other requests' reads on a few connections: the hot path of list and get calls. Give hot
   * statements a `name` so Postgres plans them once per connection.
   */
  async read<R extends QueryResultRow>(tenantId: string, query: QueryConfig): Promise<R[]> {
    return (await this.result<R>(tenantId, query)).rows;
  }

  /**
   * `fn` on a client whose query is one `read`: for repository methods written against a client (they also run
   * inside `run` transactions) that issue exactly one read-only statement. A second statement from `fn` would be a
   * read of its own, outside the first one's snapshot, so it is refused (a bug, not the caller's input).
   */
  readWith<T>(tenantId: string, fn: (client: SqlClient) => Promise<T>): Promise<T> {
    let used = false;
    const client: SqlClient = {
      query: <R extends QueryResultRow>(queryTextOrConfig: string | QueryConfig, values?: unknown[]) => {
        if (used) return Promise.reject(new SecondStatementError());
        used = true;
        const query = typeof queryTextOrConfig === 'string' ? { text: queryTextOrConfig, values } : values ? { ...queryTextOrConfig, values } : queryTextOrConfig;
        return this.result<R>(tenantId, query);
      },
    };
    return fn(client);
  }

  private async result<R extends QueryResultRow>(tenantId: string, query: QueryConfig): Promise<QueryResult<R>> {
    try {
      return await this.reads.read<R>(tenantId, query);
    } catch (err) {
      throw isDriverError(err) ? toDatabaseError(err, `tenant ${tenantId} read`) : err;
    }
  }
}

/** A function given to TenantDb.readWith issued more than one statement: it belongs in TenantDb.run. */
export class SecondStatementError extends Error {
  override readonly name = 'SecondStatementError';

  constructor() {
    super('TenantDb.readWith runs one statement; a function that needs more must use TenantDb.run');
  }
}

/**
 * Connections the pipelined reads may hold at once (of the pool's 10): two keep both cores' worth of Postgres
 * busy under load without making one slow read hold up many others.
 */
const READ_LANES = 2;

/** pg's server errors and socket errors carry a string `code`; the app's own errors do not. */
function isDriverError(err: unknown): boolean {
  if (err instanceof ProblemException || err instanceof HttpException) return false;
  return err instanceof Error && typeof (err as { code?: unknown }).code === 'string';
}

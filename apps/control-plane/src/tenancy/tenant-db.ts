import { HttpException, Inject, Injectable } from '@nestjs/common';
import { TenantReads, toDatabaseError, withTenant, type Pool, type PoolClient, type QueryConfig, type QueryResultRow } from '@weir/db';
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
    try {
      return (await this.reads.read<R>(tenantId, query)).rows;
    } catch (err) {
      throw isDriverError(err) ? toDatabaseError(err, `tenant ${tenantId} read`) : err;
    }
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

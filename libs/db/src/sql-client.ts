import type { QueryConfig, QueryResult, QueryResultRow } from 'pg';

/**
 * The one method of a client that repository SQL uses. pg's PoolClient has it (inside a TenantDb.run transaction),
 * and so does the client of TenantDb.readWith, whose single statement is one pipelined tenant read: one repository
 * method serves both.
 */
export interface SqlClient {
  query<R extends QueryResultRow = QueryResultRow>(queryTextOrConfig: string | QueryConfig, values?: unknown[]): Promise<QueryResult<R>>;
}

export { createPool, type PoolOptions } from './pool';
export { withTenant } from './with-tenant';
export { queryAsTenant } from './tenant-read';
export { LANE_STALL_MS, TenantReads } from './tenant-reads';
export { withTransaction } from './transaction';
export type { SqlClient } from './sql-client';
export { DatabaseError, DatabaseUnavailableError, InvalidTenantIdError, toDatabaseError } from './errors';
export type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';

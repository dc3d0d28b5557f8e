export { createPool, type PoolOptions } from './pool';
export { withTenant } from './with-tenant';
export { withTransaction } from './transaction';
export { DatabaseError, DatabaseUnavailableError, InvalidTenantIdError, toDatabaseError } from './errors';
export type { Pool, PoolClient } from 'pg';

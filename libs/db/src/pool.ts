import { Pool, type PoolConfig } from 'pg';
import { fastTypes } from './timestamps';

export interface PoolOptions {
  /** A postgres:// URL; the control plane passes WEIR_PG_URL (the non-owner application role). */
  readonly connectionString: string;
  /** Shown in pg_stat_activity, which makes a busy database easier to read. */
  readonly applicationName?: string;
  readonly max?: number;
  readonly connectionTimeoutMs?: number;
  readonly idleTimeoutMs?: number;
  /** Server-side cap per statement, so one runaway query cannot hold a connection forever. */
  readonly statementTimeoutMs?: number;
  /**
   * Pipelining (pg's `pipeline`, default on): a query is written without waiting for the answer to the one before
   * it, so concurrent queries on one connection (a transaction's independent statements) share round trips. Code
   * that awaits each query behaves exactly as without it. queryAsTenant needs no pipelining: it is one exchange.
   */
  readonly pipeline?: boolean;
  /** Called for errors on idle clients (a restarted server); without a listener pg would crash the process. */
  readonly onIdleError?: (err: Error) => void;
}

/** A pg Pool for one role. Connections are opened on first use, so creating the pool never blocks. */
export function createPool(options: PoolOptions): Pool {
  const config: PoolConfig = {
    connectionString: options.connectionString,
    application_name: options.applicationName ?? 'weir',
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
    idleTimeoutMillis: options.idleTimeoutMs ?? 30_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    pipeline: options.pipeline ?? true,
    // pg's own type parsers, with a faster one for timestamptz (same results).
    types: fastTypes as PoolConfig['types'],
  };
  const pool = new Pool(config);
  pool.on('error', (err) => options.onIdleError?.(err));
  return pool;
}

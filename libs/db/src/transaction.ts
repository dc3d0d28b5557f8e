import type { Pool, PoolClient } from 'pg';
import { toDatabaseError } from './errors';

/**
 * Runs `fn` in a transaction on one pooled connection: commits when fn resolves, rolls back when it throws and
 * rethrows fn's error unchanged. `beginStatements` are sent with BEGIN in the same round trip (withTenant sets the
 * tenant there: on a busy API every round trip counts); they must be trusted SQL, never user input. A connection
 * whose rollback fails is destroyed rather than returned to the pool mid-transaction.
 */
export async function withTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
  beginStatements?: string,
  begin: 'BEGIN' | 'BEGIN READ ONLY' = 'BEGIN',
): Promise<T> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw toDatabaseError(err, 'connect');
  }
  let broken: Error | undefined;
  try {
    try {
      await client.query(beginStatements ? `${begin}; ${beginStatements}` : begin);
    } catch (err) {
      throw toDatabaseError(err, 'begin transaction');
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
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    }
    throw err;
  } finally {
    client.release(broken);
  }
}

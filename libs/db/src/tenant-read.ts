import { DatabaseError as PgServerError, Query, type Pool, type PoolClient, type QueryConfig, type QueryResult, type QueryResultRow } from 'pg';
import { toDatabaseError } from './errors';
import { assertTenantId } from './with-tenant';

/**
 * The statement run before the caller's, in the same implicit transaction: the tenant for row-level security and
 * READ ONLY (transaction_read_only is what SET TRANSACTION READ ONLY sets), both transaction-local. Prepared once
 * per connection under this name.
 */
const PRELUDE_NAME = 'weir.tenant_read';
const PRELUDE_TEXT = "SELECT set_config('app.tenant_id', $1, true), set_config('transaction_read_only', 'on', true)";

/** Connections on which PRELUDE_NAME is known to be prepared (its first execution completed). */
const preparedOn = new WeakSet<object>();

/** The parts of pg's protocol connection (pg 8) used to write the messages of one tenant read. */
interface ProtocolConnection {
  parse(opts: { text: string; name?: string; types?: unknown[] }): void;
  bind(opts: { portal?: string; statement?: string; values?: unknown[]; binary?: boolean; valueMapper?: (value: unknown, index: number) => unknown }): void;
  describe(opts: { type: 'S' | 'P'; name?: string }): void;
  execute(opts: { portal?: string }): void;
  close(opts: { type: 'S' | 'P'; name?: string }): void;
  sync(): void;
  submittedNamedStatements: Record<string, string>;
}

/** The parts of pg's Query (pg 8) that TenantRead builds on: its fields and the handlers the client calls. */
interface PgQueryInternals {
  readonly text?: string;
  readonly name?: string;
  readonly values?: unknown[];
  readonly types?: unknown[];
  readonly binary?: boolean;
  readonly portal: string;
  /** pg reports this error when the ReadyForQuery arrives, instead of the result. */
  _canceledDueToError: Error | false | undefined;
  hasBeenParsed(connection: ProtocolConnection): boolean;
  handleDataRow(msg: unknown): void;
  handleCommandComplete(msg: unknown, connection: ProtocolConnection): void;
  handleError(err: Error, connection: ProtocolConnection): void;
}

const QueryBase = Query as unknown as new (config: QueryConfig, values: undefined, callback: (err: Error | undefined, result: QueryResult) => void) => PgQueryInternals;

/**
 * One tenant read as ONE extended-protocol exchange ending in a single Sync: Postgres runs everything before a Sync
 * in one implicit transaction, so the prelude's transaction-local settings hold for the statement and end with it
 * (Sync commits, or rolls back after an error). Written in one corked write by pg's submit; answered with one
 * ReadyForQuery. Compared with BEGIN READ ONLY + set_config, the statement, COMMIT (three queries, three answers,
 * two statements parsed per request by Postgres), it saves the Node and Postgres CPU of two round trips' worth of
 * messages (docs/control-plane.md). The prelude's row and command tag are swallowed here: the caller sees only its
 * statement's result.
 */
class TenantRead extends QueryBase {
  /** True until the prelude's CommandComplete arrives. */
  private inPrelude = true;

  constructor(
    config: QueryConfig,
    private readonly tenantId: string,
    callback: (err: Error | undefined, result: QueryResult) => void,
  ) {
    super(config, undefined, callback);
  }

  /** Always the extended protocol: pg would send a statement without parameters as a simple query. */
  requiresPreparation(): boolean {
    return true;
  }

  /** Replaces pg's Query.prepare (called inside its cork/uncork): the statement's Parse first, then the prelude. */
  prepare(connection: ProtocolConnection): void {
    // Parameters are mapped before anything is written: a value pg cannot send must not leave half an exchange on
    // the connection. Then only a Sync goes out, and pg reports the error when its ReadyForQuery arrives.
    let values: unknown[] | undefined;
    try {
      values = this.values?.map((value) => prepareValue(value));
    } catch (err) {
      this._canceledDueToError = new UnsendableParameterError(err);
      connection.sync();
      return;
    }
    // The statement's Parse goes first: if it fails, Postgres skips everything up to Sync, prelude included, so
    // pg's own bookkeeping of named statements (keyed on this query's name) stays right.
    if (!this.hasBeenParsed(connection)) {
      connection.parse({ text: this.text ?? '', name: this.name, types: this.types });
      if (this.name) connection.submittedNamedStatements[this.name] = this.text ?? '';
    }
    if (!preparedOn.has(connection)) {
      // Closing a statement that does not exist is not an error: this re-prepares safely after a failed first try.
      connection.close({ type: 'S', name: PRELUDE_NAME });
      connection.parse({ text: PRELUDE_TEXT, name: PRELUDE_NAME, types: [] });
    }
    connection.bind({ statement: PRELUDE_NAME, values: [this.tenantId] });
    connection.execute({});
    connection.bind({ portal: this.portal, statement: this.name, values, binary: this.binary });
    connection.describe({ type: 'P', name: this.portal });
    connection.execute({ portal: this.portal });
    connection.sync();
  }

  override handleDataRow(msg: unknown): void {
    if (!this.inPrelude) super.handleDataRow(msg);
  }

  override handleCommandComplete(msg: unknown, connection: ProtocolConnection): void {
    if (!this.inPrelude) return super.handleCommandComplete(msg, connection);
    this.inPrelude = false;
    preparedOn.add(connection);
  }
}

// pg's own mapping of JS values to parameters (Dates, Buffers, arrays, JSON), as its Query uses.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

/**
 * Runs ONE read-only statement as the tenant in one round trip and one implicit transaction: row-level security
 * reads `app.tenant_id`, which dies with the transaction (nothing leaks to the next user of the connection), and
 * READ ONLY makes a write here an error, not a change. Works on any pg pool (pipelined or not); TenantReads
 * pipelines many of them on a few connections.
 *
 * The statement's own errors are thrown as pg raised them (a server error leaves the connection usable: Sync
 * rolled the transaction back); failing to connect becomes a DatabaseError, and a connection that failed in any
 * other way (socket, timeout) is destroyed rather than reused.
 */
export async function queryAsTenant<R extends QueryResultRow = QueryResultRow>(
  pool: Pool,
  tenantId: string,
  query: QueryConfig,
): Promise<QueryResult<R>> {
  assertTenantId(tenantId);
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw toDatabaseError(err, 'connect');
  }
  return new Promise<QueryResult<R>>((resolve, reject) => {
    submitTenantRead(client, tenantId, query, (err, result) => {
      client.release(brokenBy(err));
      if (err) reject(err);
      else resolve(result as QueryResult<R>);
    });
  });
}

/** A parameter pg could not turn into a value (a circular object, say): nothing of the read was sent. */
export class UnsendableParameterError extends Error {
  override readonly name = 'UnsendableParameterError';

  constructor(cause: unknown) {
    super(`a parameter cannot be sent: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * The error that makes a connection unfit for reuse, if any: anything but an ordinary server error (those leave the
 * session idle after Sync). FATAL server errors (a terminated backend) end the session too.
 */
export function brokenBy(err: Error | undefined): Error | undefined {
  if (!err || err instanceof UnsendableParameterError) return undefined;
  if (err instanceof PgServerError && err.severity !== 'FATAL' && err.severity !== 'PANIC') return undefined;
  return err;
}

/** Writes one tenant read on `client` (tenantId already checked); `done` gets the statement's result or error. */
export function submitTenantRead(
  client: PoolClient,
  tenantId: string,
  query: QueryConfig,
  done: (err: Error | undefined, result: QueryResult) => void,
): void {
  // A copy: pg writes the callback into the config it is given.
  void client.query(new TenantRead({ ...query }, tenantId, done) as unknown as Query);
}

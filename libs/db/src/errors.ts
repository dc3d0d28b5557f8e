/** Errors libs/db raises at its boundary. `cause` keeps the driver's error for the server-side log. */
export class DatabaseError extends Error {
  override readonly name: string = 'DatabaseError';
  /** The Postgres SQLSTATE (e.g. 23505), when the server answered with one. */
  readonly code: string | undefined;

  constructor(message: string, options: { cause?: unknown; code?: string } = {}) {
    super(message, { cause: options.cause });
    this.code = options.code;
  }
}

/** The tenant id given to `withTenant` is not a usable identifier; nothing was sent to the database. */
export class InvalidTenantIdError extends DatabaseError {
  override readonly name = 'InvalidTenantIdError';
}

/** Postgres could not be reached or dropped the connection: retrying later may succeed. */
export class DatabaseUnavailableError extends DatabaseError {
  override readonly name = 'DatabaseUnavailableError';
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', '57P01', '57P03']);

/** Wraps a driver error once, so callers match on classes rather than on pg's error strings. */
export function toDatabaseError(err: unknown, what: string): DatabaseError {
  if (err instanceof DatabaseError) return err;
  const code = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : undefined;
  const reason = err instanceof Error ? err.message : String(err);
  if ((code && CONNECTION_CODES.has(code)) || /Connection terminated|connection timeout/i.test(reason)) {
    return new DatabaseUnavailableError(`${what}: database unavailable (${reason})`, { cause: err, code });
  }
  return new DatabaseError(`${what}: ${reason}`, { cause: err, code });
}

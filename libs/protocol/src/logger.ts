import pino from 'pino';

/** The logging the protocol needs; a pino logger satisfies it, so a worker passes its own. */
export interface ProtocolLogger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export function defaultLogger(): ProtocolLogger {
  return pino({ base: { component: 'weir-protocol' }, level: process.env.WEIR_LOG_LEVEL ?? 'info' });
}

export function errorFields(err: unknown): { err: { name: string; message: string } } {
  return err instanceof Error
    ? { err: { name: err.name, message: err.message } }
    : { err: { name: 'Error', message: String(err) } };
}

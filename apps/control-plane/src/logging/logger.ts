import type { LoggerService, LogLevel } from '@nestjs/common';
import pino, { type Logger } from 'pino';
import { currentRequestId } from './request-context';

/**
 * Header and field names whose values never reach a log line, wherever they appear. Configuration is never
 * logged whole either: it holds database passwords and S3 secrets.
 */
const REDACT = [
  'password',
  'secret',
  'authorization',
  'cookie',
  '*.password',
  '*.secret',
  '*.authorization',
  '*.cookie',
  '*.apiKey',
  '*["x-api-key"]',
  '*.secretAccessKey',
];

/** One JSON line per event; the request id is added to every line logged while a request is being served. */
export function createRootLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'weir-control-plane' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT, censor: '[redacted]' },
      mixin: (fields: object) => {
        if ('requestId' in fields) return {};
        const requestId = currentRequestId();
        return requestId ? { requestId } : {};
      },
    },
    destination,
  );
}

/** Nest's own log lines (start-up, routes, terminus) go through the same pino logger. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }
  setLogLevels(_levels: LogLevel[]): void {
    // The level comes from WEIR_LOG_LEVEL; Nest's own level switch is not used.
  }

  /** Nest passes (message, [stack], context): the last string is the context, a stack may precede it. */
  private write(level: pino.Level, message: unknown, rest: unknown[]): void {
    const strings = rest.filter((r): r is string => typeof r === 'string');
    const context = strings.length ? strings[strings.length - 1] : undefined;
    const stack = level === 'error' && strings.length > 1 ? strings[0] : undefined;
    const fields: Record<string, unknown> = {};
    if (context) fields.context = context;
    if (stack) fields.stack = stack;
    if (message instanceof Error) {
      this.logger[level]({ ...fields, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.logger[level]({ ...fields, ...(message as object) });
    } else {
      this.logger[level](fields, String(message));
    }
  }
}

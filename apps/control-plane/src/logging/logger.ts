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
    destination ?? bufferedStdout(),
  );
}

/** How long a log line may wait in memory before it is written. */
const LOG_FLUSH_MS = 100;
/** Buffered bytes that trigger a write at once. */
const LOG_BUFFER_BYTES = 8 * 1024; // sonic-boom needs it below its largest write (16 KiB)

/**
 * Standard output, written in batches: one write per LOG_BUFFER_BYTES or per LOG_FLUSH_MS instead of one per line
 * (each costs a thread-pool round trip; at 1,000 requests/s the access log alone made 1,000 of them a second).
 * pino flushes it synchronously when the process exits, crash included.
 */
function bufferedStdout(): pino.DestinationStream {
  if (!stdout) {
    const stream = pino.destination({ dest: process.stdout.fd || 1, sync: false, minLength: LOG_BUFFER_BYTES });
    // sonic-boom's flush writes even an empty buffer; its (private) byte count says whether anything waits.
    setInterval(() => (stream as { _len?: number })._len !== 0 && stream.flush(), LOG_FLUSH_MS).unref();
    stdout = stream;
  }
  return stdout;
}
/** One per process: every app built in it (tests build several) shares standard output. */
let stdout: pino.DestinationStream | undefined;

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

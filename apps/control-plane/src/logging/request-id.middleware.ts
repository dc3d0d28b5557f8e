import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { requestContext } from './request-context';

export const REQUEST_ID_HEADER = 'x-request-id';
/** A caller's id is echoed only when it is short and printable; anything else is replaced, not trusted. */
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id (the caller's X-Request-Id or a new UUID), echoes it in the response, runs the rest of
 * the request inside the context the logger reads, and writes one access-log line when the response ends. The
 * query string is left out of the log: it is where callers are most tempted to put secrets.
 */
export function requestIdMiddleware(logger: Logger) {
  return (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    const offered = req.headers[REQUEST_ID_HEADER];
    const requestId = typeof offered === 'string' && ACCEPTABLE_ID.test(offered) ? offered : randomUUID();
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const path = (req.url ?? '').split('?')[0];
      // Probes hit /health every few seconds: their lines would drown the rest at info level.
      logger[path.startsWith('/health') ? 'debug' : 'info'](
        {
          requestId,
          method: req.method,
          path,
          status: res.statusCode,
          durationMs: Math.round(durationMs * 100) / 100,
        },
        'request served',
      );
    });
    requestContext.run({ requestId }, next);
  };
}

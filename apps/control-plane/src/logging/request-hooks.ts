import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { requestContext } from './request-context';

const REQUEST_ID_HEADER = 'x-request-id';
/** A caller's id is echoed only when it is short and printable; anything else is replaced, not trusted. */
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify's `genReqId`: the caller's X-Request-Id when acceptable, else a new UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const offered = req.headers[REQUEST_ID_HEADER];
  return typeof offered === 'string' && ACCEPTABLE_ID.test(offered) ? offered : randomUUID();
}

/** The request's path without its query string: the query is where callers are most tempted to put secrets. */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * Echoes the request id in every response (errors and 404s included), runs guards, interceptors and handlers inside
 * the context the logger reads (Fastify calls the handler synchronously from the last preHandler's `done`), and
 * writes one access-log line when the response has been sent.
 */
export function registerRequestLogging(fastify: FastifyInstance, logger: Logger): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  fastify.addHook('preHandler', (request, _reply, done) => requestContext.run({ requestId: request.id }, done));
  fastify.addHook('onResponse', (request, reply, done) => {
    const path = pathOf(request.url);
    // Probes hit /health every few seconds: their lines would drown the rest at info level.
    logger[path.startsWith('/health') ? 'debug' : 'info'](
      {
        requestId: request.id,
        method: request.method,
        path,
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request served',
    );
    done();
  });
}

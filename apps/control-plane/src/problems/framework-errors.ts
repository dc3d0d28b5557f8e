import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pathOf } from '../logging/request-hooks';
import { PROBLEM_CONTENT_TYPE, PROBLEM_TYPES, type ProblemDetails } from './problem-details';
import { InvalidRequestProblem, ProblemException } from './problem.exception';
import { toProblem } from './to-problem';

export const URI_TOO_LONG_TYPE = 'urn:weir:problem:uri-too-long';

/**
 * What the router refuses before any hook, guard or filter runs: a path whose percent-escapes do not decode (a
 * `%` without two hex digits, or bytes that are not UTF-8: `%FF`, a lone `%C3`) and a path segment longer than the
 * router's maxParamLength. Fastify would answer these with its own JSON; as everywhere else they are problem details.
 */
export function frameworkErrorProblem(error: FastifyError, maxParamLength: number): unknown {
  if (error.code === 'FST_ERR_BAD_URL') {
    return new InvalidRequestProblem([
      { in: 'path', name: '(path)', reason: 'has a malformed percent-escape: each % must start a %XX escape, and the bytes must be UTF-8' },
    ]);
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return new ProblemException(414, URI_TOO_LONG_TYPE, 'URI Too Long', `A path segment is longer than ${maxParamLength} characters; no id or name is that long`, [
      { in: 'path', name: '(path)', reason: `has a segment longer than ${maxParamLength} characters` },
    ]);
  }
  return error;
}

/** Fastify's `frameworkErrors` option: answers the router's refusals as problem details. */
export function frameworkErrorHandler(maxParamLength: number) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const { problem } = toProblem(frameworkErrorProblem(error, maxParamLength), pathOf(request.url), request.id);
    reply.status(problem.status).header('X-Request-Id', request.id).header('Content-Type', PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
  };
}

/**
 * Fastify's `clientErrorHandler`: what Node's HTTP parser refuses before there is a request (headers over 16 KiB,
 * a URL that long included: 431; a request that did not arrive in time: 408; anything unparsable: 400).
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, detail] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'The request did not arrive whole in time']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'The request line and headers exceed 16 KiB (a URL that long included)']
        : [400, 'The request is not valid HTTP/1.1'];
  const problem: ProblemDetails = { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail, requestId: randomUUID() };
  const body = JSON.stringify(problem);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${problem.title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${problem.requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * While the server closes, requests that still arrive on open connections get a 503 problem (Fastify's own
 * `return503OnClosing` answer is its JSON; it is turned off in app.ts for this).
 */
export function registerClosingAnswer(fastify: FastifyInstance): void {
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    if (!closing) return done();
    const problem: ProblemDetails = {
      type: PROBLEM_TYPES.unavailable,
      title: 'Service Unavailable',
      status: 503,
      detail: 'This control plane instance is shutting down; retry (another instance, or this one once restarted)',
      instance: pathOf(request.url),
      requestId: request.id,
    };
    reply.status(503).header('Connection', 'close').header('Retry-After', '5').header('Content-Type', PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
  });
}

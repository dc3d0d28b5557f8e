import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { healthCheckFailure } from '../health/health-check-failure';
import { pathOf } from '../logging/request-hooks';
import { PROBLEM_CONTENT_TYPE } from './problem-details';
import { toProblem } from './to-problem';

/** The only exception filter: every error leaves as RFC 9457 problem details. */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(error: unknown, host: ArgumentsHost): unknown {
    // GraphQL resolvers: hand the error back; GraphQL's own error formatting (graphql/graphql-errors.ts) shapes it.
    if (host.getType<string>() !== 'http') return error;
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const instance = pathOf(request.url);
    const health = healthCheckFailure(error);
    if (health && !reply.sent) {
      // Probes and dashboards read terminus's standard body; it is not an error of the request.
      reply.status(503).header('Content-Type', 'application/json; charset=utf-8').send(JSON.stringify(health));
      return;
    }
    // From the request, not the logging context: Fastify's own rejections (a malformed body) come before that context.
    const requestId = request.id;
    const { problem, unexpected, headers } = toProblem(error, instance, requestId);
    if (unexpected) {
      this.logger.error({ requestId, err: error, method: request.method, path: instance }, 'request failed unexpectedly');
    }
    if (reply.sent) return;
    reply.status(problem.status);
    if (problem.status === 503) reply.header('Retry-After', '5');
    if (headers) reply.headers(headers);
    reply.header('Content-Type', PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
  }
}

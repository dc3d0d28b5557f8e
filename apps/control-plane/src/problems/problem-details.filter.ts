import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Logger } from 'pino';
import { healthCheckFailure } from '../health/health-check-failure';
import { currentRequestId } from '../logging/request-context';
import { PROBLEM_CONTENT_TYPE } from './problem-details';
import { toProblem } from './to-problem';

interface HttpResponse {
  headersSent: boolean;
  status(code: number): HttpResponse;
  setHeader(name: string, value: string): void;
  send(body: string): void;
}

/** The only exception filter: every error leaves as RFC 9457 problem details. */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(error: unknown, host: ArgumentsHost): unknown {
    // GraphQL resolvers: hand the error back; GraphQL's own error formatting (graphql/graphql-errors.ts) shapes it.
    if (host.getType<string>() !== 'http') return error;
    const http = host.switchToHttp();
    const request = http.getRequest<{ url?: string; method?: string }>();
    const response = http.getResponse<HttpResponse>();
    const instance = (request.url ?? '').split('?')[0];
    const health = healthCheckFailure(error);
    if (health && !response.headersSent) {
      // Probes and dashboards read terminus's standard body; it is not an error of the request.
      response.status(503);
      response.setHeader('Content-Type', 'application/json; charset=utf-8');
      response.send(JSON.stringify(health));
      return;
    }
    const requestId = currentRequestId();
    const { problem, unexpected } = toProblem(error, instance, requestId);
    if (unexpected) {
      this.logger.error({ requestId, err: error, method: request.method, path: instance }, 'request failed unexpectedly');
    }
    if (response.headersSent) return;
    response.status(problem.status);
    if (problem.status === 503) response.setHeader('Retry-After', '5');
    response.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
    response.send(JSON.stringify(problem));
  }
}

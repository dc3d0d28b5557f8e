import type { FastifyInstance } from 'fastify';
import { tokenOf } from '../graphql/graphql-auth';
import { GRAPHQL_PATH } from '../graphql/graphql-options';
import { pathOf } from '../logging/request-hooks';
import { PROBLEM_CONTENT_TYPE } from '../problems/problem-details';
import { toProblem } from '../problems/to-problem';
import type { ApiKeyAuthenticator } from '../tenancy';
import type { ApiRateLimiter } from './api-rate-limiter';
import { RateLimitedProblem } from './rate-limits';

/**
 * GraphQL over HTTP is one route Apollo serves, outside Nest's guard (fields authenticate in their own context), so
 * its requests are counted here, before the body is read: a request whose `Authorization` holds a valid API key
 * counts against that key and its tenant like a REST call, and over a limit is answered with the same 429 problem
 * and Retry-After. A missing or invalid key is left to GraphQL's own UNAUTHENTICATED answer. graphql-ws connections
 * (WebSocket upgrades) do not pass through Fastify's routes and are not counted.
 */
export function registerGraphqlRateLimit(fastify: FastifyInstance, authenticator: ApiKeyAuthenticator, limiter: ApiRateLimiter): void {
  if (!limiter.enabled) return;
  fastify.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.url !== GRAPHQL_PATH) return;
    const token = tokenOf(request.headers.authorization, false);
    if (!token) return;
    let principal;
    try {
      principal = await authenticator.authenticate(token);
    } catch {
      return; // unknown, revoked or uncheckable: GraphQL's context answers it (graphql-auth.ts)
    }
    try {
      await limiter.admit(principal);
    } catch (err) {
      if (!(err instanceof RateLimitedProblem)) throw err;
      const { problem, headers } = toProblem(err, pathOf(request.url), request.id);
      return reply
        .status(problem.status)
        .headers(headers ?? {})
        .header('Content-Type', PROBLEM_CONTENT_TYPE)
        .send(JSON.stringify(problem));
    }
  });
}

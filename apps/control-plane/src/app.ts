import { isUtf8 } from 'node:buffer';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { RawServerDefault } from 'fastify';
import { AppModule } from './app.module';
import type { ControlPlaneOptions } from './control-plane-options';
import { GRAPHQL_PATH, GRAPHQL_ROUTE_AUTH } from './graphql/graphql-options';
import { createRootLogger, PinoNestLogger } from './logging/logger';
import { registerRequestLogging, requestIdOf } from './logging/request-hooks';
import { ControlPlaneMetrics } from './metrics/control-plane-metrics';
import { registerHttpMetrics } from './metrics/http-metrics.hook';
import { clientErrorHandler, frameworkErrorHandler, registerClosingAnswer } from './problems/framework-errors';
import { ProblemDetailsFilter } from './problems/problem-details.filter';
import { InvalidRequestProblem } from './problems/problem.exception';
import { ApiRateLimiter, registerGraphqlRateLimit } from './rate-limits';
import { ApiKeyAuthenticator, assertEveryRouteDecided, recordServedRoutes, routeTable } from './tenancy';
import { invalidUtf8Fields } from './validation/text';
import { TextBoundaryInterceptor } from './validation/text-boundary.interceptor';

/** Largest JSON body accepted (rule sets are the largest); bundles are multipart and limited per tenant instead. */
const JSON_BODY_LIMIT_BYTES = 1024 * 1024;
/** Longest a request may take to arrive whole, bundle uploads included. */
const REQUEST_TIMEOUT_MS = 300_000;
/** Longest path segment the router matches (a 414 beyond): ids and names are far shorter. */
const MAX_PARAM_LENGTH = 512;

/**
 * Builds the control plane without listening: main.ts listens on the configured address, tests on port 0.
 * `init` false leaves lifecycle hooks unrun (no consumers, no timers): the OpenAPI generator uses that.
 *
 * Fastify rather than Express: the same routes cost about half the CPU per request (measured in docs/control-plane.md).
 */
export async function createApp(options: ControlPlaneOptions, { init = true } = {}): Promise<NestFastifyApplication> {
  const logger = createRootLogger(options.config.WEIR_LOG_LEVEL, options.logDestination);
  const adapter = new FastifyAdapter({
    logger: false,
    genReqId: requestIdOf,
    requestIdHeader: false,
    bodyLimit: JSON_BODY_LIMIT_BYTES,
    // Node's default, which Fastify turns off: a client that trickles a request (a slow-loris upload) is cut off.
    requestTimeout: REQUEST_TIMEOUT_MS,
    // As under Express, which earlier clients relied on: /v1/slos/ is /v1/slos.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Errors the HTTP layer answers by itself are problem details too (problems/framework-errors.ts).
    frameworkErrors: frameworkErrorHandler(MAX_PARAM_LENGTH),
    clientErrorHandler,
    return503OnClosing: false,
  });
  const fastify = adapter.getInstance();
  registerClosingAnswer(fastify);
  // Before any route exists: the route table is what the server really registers (tenancy/route-table.ts).
  recordServedRoutes(fastify, { [GRAPHQL_PATH]: GRAPHQL_ROUTE_AUTH });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(options, logger), adapter, {
    logger: new PinoNestLogger(logger),
    bufferLogs: false,
    abortOnError: false,
    // JSON only (and multipart for bundles, below): no form or text bodies, which nothing here reads; they are 415.
    bodyParser: false,
  });
  fastify.removeContentTypeParser('text/plain');
  // A body-less request that still says application/json (many HTTP clients send it on DELETE) has no body, as it
  // had under Express; anything else goes to Fastify's JSON parser (400 for malformed JSON or __proto__ keys), once
  // its bytes are known to be UTF-8: decoding would silently replace the others (RFC 8259 requires UTF-8).
  const jsonParser = fastify.getDefaultJsonParser('error', 'error');
  app.useBodyParser<RawServerDefault>('application/json', { bodyLimit: JSON_BODY_LIMIT_BYTES }, (request, body, done) => {
    if (body.length === 0) return done(null, undefined);
    if (!isUtf8(body)) return done(new InvalidRequestProblem(invalidUtf8Fields(body)), undefined);
    jsonParser(request, body.toString('utf8'), done);
  });
  // Bundle uploads read the multipart stream themselves (bundles/multipart-bundle.ts): no parser may buffer it.
  fastify.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null));
  registerRequestLogging(fastify, logger);
  registerHttpMetrics(fastify, app.get(ControlPlaneMetrics));
  // REST calls are counted by the auth guard; GraphQL's HTTP route here (rate-limits/graphql-rate-limit.hook.ts).
  registerGraphqlRateLimit(fastify, app.get(ApiKeyAuthenticator), app.get(ApiRateLimiter));
  app.useGlobalFilters(new ProblemDetailsFilter(logger));
  app.useGlobalInterceptors(new TextBoundaryInterceptor());
  app.enableShutdownHooks();
  if (init) {
    await app.init();
    // Deny by default: an app with a route that has no authentication decision does not start.
    try {
      assertEveryRouteDecided(routeTable(app));
    } catch (err) {
      await app.close();
      throw err;
    }
  }
  return app;
}

import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { RawServerDefault } from 'fastify';
import { AppModule } from './app.module';
import type { ControlPlaneOptions } from './control-plane-options';
import { createRootLogger, PinoNestLogger } from './logging/logger';
import { registerRequestLogging, requestIdOf } from './logging/request-hooks';
import { ControlPlaneMetrics } from './metrics/control-plane-metrics';
import { registerHttpMetrics } from './metrics/http-metrics.hook';
import { ProblemDetailsFilter } from './problems/problem-details.filter';

/** Largest JSON body accepted (rule sets are the largest); bundles are multipart and limited per tenant instead. */
const JSON_BODY_LIMIT_BYTES = 1024 * 1024;
/** Longest a request may take to arrive whole, bundle uploads included. */
const REQUEST_TIMEOUT_MS = 300_000;

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
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 512 },
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(options, logger), adapter, {
    logger: new PinoNestLogger(logger),
    bufferLogs: false,
    abortOnError: false,
  });
  const fastify = app.getHttpAdapter().getInstance();
  // A body-less request that still says application/json (many HTTP clients send it on DELETE) has no body, as it
  // had under Express; anything else goes to Fastify's JSON parser (400 for malformed JSON or __proto__ keys).
  const jsonParser = fastify.getDefaultJsonParser('error', 'error');
  app.useBodyParser<RawServerDefault>('application/json', { bodyLimit: JSON_BODY_LIMIT_BYTES }, (request, body, done) =>
    body.length === 0 ? done(null, undefined) : jsonParser(request, body.toString('utf8'), done),
  );
  // Bundle uploads read the multipart stream themselves (bundles/multipart-bundle.ts): no parser may buffer it.
  fastify.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null));
  registerRequestLogging(fastify, logger);
  registerHttpMetrics(fastify, app.get(ControlPlaneMetrics));
  app.useGlobalFilters(new ProblemDetailsFilter(logger));
  app.enableShutdownHooks();
  if (init) await app.init();
  return app;
}

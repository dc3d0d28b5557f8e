import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import type { ControlPlaneOptions } from './control-plane-options';
import { createRootLogger, PinoNestLogger } from './logging/logger';
import { requestIdMiddleware } from './logging/request-id.middleware';
import { ProblemDetailsFilter } from './problems/problem-details.filter';

/**
 * Builds the control plane without listening: main.ts listens on the configured address, tests on port 0.
 * `init` false leaves lifecycle hooks unrun (no consumers, no timers): the OpenAPI generator uses that.
 */
export async function createApp(options: ControlPlaneOptions, { init = true } = {}): Promise<NestExpressApplication> {
  const logger = createRootLogger(options.config.WEIR_LOG_LEVEL, options.logDestination);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(options, logger), {
    logger: new PinoNestLogger(logger),
    bufferLogs: false,
    abortOnError: false,
  });
  app.disable('x-powered-by');
  // No ETag: Express would hash every response body (sha1) for revalidations API clients do not make.
  app.set('etag', false);
  app.use(requestIdMiddleware(logger));
  app.useGlobalFilters(new ProblemDetailsFilter(logger));
  app.enableShutdownHooks();
  if (init) await app.init();
  return app;
}

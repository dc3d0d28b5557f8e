import { Injectable, type NestMiddleware } from '@nestjs/common';
import { ControlPlaneMetrics } from './control-plane-metrics';

/**
 * Times every request. The route label is the matched route pattern (`/v1/slos/:id`), never the raw path, so ids
 * do not become label values; requests that match no route share one label.
 */
/** The parts of Express's request and response used here (Express's types are not installed). */
interface Request {
  readonly method: string;
  readonly baseUrl: string;
  readonly route?: { readonly path?: unknown };
}
interface Response {
  readonly statusCode: number;
  once(event: 'finish', listener: () => void): unknown;
}

@Injectable()
export class HttpMetricsMiddleware implements NestMiddleware {
  constructor(private readonly metrics: ControlPlaneMetrics) {}

  use(req: Request, res: Response, next: () => void): void {
    const start = process.hrtime.bigint();
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      this.metrics.httpDuration.observe({ method: req.method, route: routeOf(req), status: String(res.statusCode) }, seconds);
    });
    next();
  }
}

/** The path this middleware is mounted on: a request that matched nothing else still carries it as its route. */
export const ALL_ROUTES = '{*path}';

function routeOf(req: Request): string {
  const route = req.route?.path;
  if (typeof route === 'string' && route !== `/${ALL_ROUTES}`) return `${req.baseUrl}${route}`;
  // Mounted handlers (Apollo at /graphql) have no route, only the mount path.
  if (req.baseUrl) return req.baseUrl;
  return 'unmatched';
}

import type { FastifyInstance } from 'fastify';
import type { ControlPlaneMetrics } from './control-plane-metrics';

/**
 * Times every request. The route label is the matched route pattern (`/v1/slos/:id`), never the raw path, so ids
 * do not become label values; requests that match no route share one label.
 */
export function registerHttpMetrics(fastify: FastifyInstance, metrics: ControlPlaneMetrics): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpDuration.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    done();
  });
}

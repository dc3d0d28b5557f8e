import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * The control plane's own Prometheus metrics: prom-client's process defaults and HTTP request durations. A
 * registry per app (not prom-client's global one), so two instances in one process (tests) do not collide.
 */
@Injectable()
export class ControlPlaneMetrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly rateLimited: Counter<'limit'>;
  readonly rateLimitUnchecked: Counter;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'weir_control_plane_' });
    this.httpDuration = new Histogram({
      name: 'weir_control_plane_http_request_duration_seconds',
      help: 'HTTP request duration by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      // From 1 ms to 10 s: the API's goal is a p99 of 25 ms.
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [this.registry],
    });
    this.rateLimited = new Counter({
      name: 'weir_control_plane_rate_limited_total',
      help: 'Requests refused with 429 by the API rate limits, by the limit they were over (key or tenant).',
      labelNames: ['limit'],
      registers: [this.registry],
    });
    this.rateLimitUnchecked = new Counter({
      name: 'weir_control_plane_rate_limit_unchecked_total',
      help: 'Requests let through without a rate-limit check because Redis could not answer (fail open).',
      registers: [this.registry],
    });
  }
}

import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from '@weir/metrics';
import type { Logger } from 'pino';
import { AdminOnly } from '../tenancy';
import { CONTROL_PLANE_OPTIONS, ROOT_LOGGER, type ControlPlaneOptions } from '../control-plane-options';
import { ControlPlaneMetrics } from './control-plane-metrics';
import { staleAfterMs } from './metrics-ingestor';
import { MetricsStore } from './metrics-store';

/**
 * Prometheus scrape endpoint, behind the platform admin token (the scraper sends `Authorization: Bearer
 * <WEIR_ADMIN_TOKEN>`): the control plane's own metrics, then the latest snapshot of every live subtask in the fleet
 * (labels: tenant, job, operator, subtask ids only; heavy keys, which are user data, are never exported), which names
 * every tenant with a running job and its rates, so no tenant's key may read it (a tenant reads its own deployments'
 * metrics through the API). Any instance answers for the whole fleet: the snapshots live in Redis.
 */
@AdminOnly()
@ApiTags('metrics')
@Controller('metrics')
export class PrometheusController {
  private readonly staleAfterMs: number;

  constructor(
    private readonly metrics: ControlPlaneMetrics,
    private readonly store: MetricsStore,
    @Inject(CONTROL_PLANE_OPTIONS) options: ControlPlaneOptions,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {
    this.staleAfterMs = staleAfterMs(options);
  }

  @Get()
  @Header('Content-Type', PROMETHEUS_CONTENT_TYPE)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Prometheus metrics: the control plane process and the latest worker snapshots' })
  @ApiProduces(PROMETHEUS_CONTENT_TYPE)
  @ApiOkResponse({ description: 'Prometheus text exposition format 0.0.4', schema: { type: 'string' } })
  async scrape(): Promise<string> {
    const own = await this.metrics.registry.metrics();
    try {
      const now = Date.now();
      const jobs = await this.store.activeJobs(now, this.staleAfterMs);
      const snapshots = (await this.store.latestSnapshots(jobs, now, this.staleAfterMs)).flat();
      return own + renderPrometheus(snapshots) + fleetUp(1);
    } catch (err) {
      // Redis down: the process metrics are still worth scraping; the fleet gauge says what is missing.
      this.logger.warn({ err: { name: (err as Error).name, message: (err as Error).message } }, 'worker snapshots unavailable for /metrics');
      return own + fleetUp(0);
    }
  }
}

function fleetUp(value: 0 | 1): string {
  return (
    '# HELP weir_control_plane_fleet_metrics_up 1 when the worker snapshots could be read from Redis.\n' +
    `# TYPE weir_control_plane_fleet_metrics_up gauge\nweir_control_plane_fleet_metrics_up ${value}\n`
  );
}

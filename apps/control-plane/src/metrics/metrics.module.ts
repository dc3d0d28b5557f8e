import { Global, Module } from '@nestjs/common';
import { ControlPlaneMetrics } from './control-plane-metrics';
import { MetricsIngestor } from './metrics-ingestor';
import { MetricsPublisher } from './metrics-publisher';
import { MetricsStore } from './metrics-store';
import { PrometheusController } from './prometheus.controller';

/**
 * Worker metrics (heartbeat snapshots → Redis → merged per deployment → pushed on the `metrics` channel) and the
 * control plane's /metrics. Global: the worker-events listener hands heartbeats to MetricsIngestor, and SLOs read
 * the minute histograms through MetricsStore.
 */
@Global()
@Module({
  controllers: [PrometheusController],
  providers: [ControlPlaneMetrics, MetricsStore, MetricsIngestor, MetricsPublisher],
  exports: [MetricsIngestor, MetricsStore, ControlPlaneMetrics],
})
export class MetricsModule {}

import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Logger } from 'pino';
import { CONTROL_PLANE_OPTIONS, ROOT_LOGGER, type ControlPlaneOptions } from '../control-plane-options';
import { EventPublisher } from '../events/events';
import { toDeploymentMetrics, type DeploymentMetrics } from './deployment-metrics';
import { staleAfterMs } from './metrics-ingestor';
import { MetricsStore } from './metrics-store';

/** Jobs merged per Redis round trip. */
const BATCH = 200;
/** How often updated jobs are merged and pushed: at most one push per deployment and second. */
export const METRICS_PUBLISH_INTERVAL_MS = 1_000;

/**
 * Every interval, merges the latest snapshots of each job that received new ones and publishes the result on the
 * job's `metrics` channel. Every instance runs it; SPOP hands each updated job to one of them, so an update is
 * published once however many instances run.
 */
@Injectable()
export class MetricsPublisher implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly intervalMs: number;
  private readonly staleAfterMs: number;

  constructor(
    private readonly store: MetricsStore,
    private readonly events: EventPublisher,
    @Inject(CONTROL_PLANE_OPTIONS) options: ControlPlaneOptions,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {
    this.intervalMs = METRICS_PUBLISH_INTERVAL_MS;
    this.staleAfterMs = staleAfterMs(options);
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One round; a round still running when the next is due makes that one a no-op. */
  tick(now = Date.now()): Promise<void> {
    this.running ??= this.publishUpdated(now)
      .catch((err: Error) => this.logger.warn({ err: { name: err.name, message: err.message } }, 'publishing metrics failed'))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  private async publishUpdated(now: number): Promise<void> {
    for (;;) {
      const jobs = await this.store.takeDirty(BATCH);
      if (jobs.length === 0) return;
      const snapshots = await this.store.latestSnapshots(jobs, now, this.staleAfterMs);
      await Promise.all(
        jobs.map(async ({ tenantId, jobId }, i) => {
          if (snapshots[i].length === 0) return;
          try {
            const metrics: DeploymentMetrics = toDeploymentMetrics(snapshots[i], now);
            await Promise.all([
              this.store.saveLatest(tenantId, jobId, JSON.stringify(metrics), this.staleAfterMs),
              this.events.publish('metrics', tenantId, jobId, metrics),
            ]);
          } catch (err) {
            // One job's bad snapshot (an undecodable histogram, say) must not hold back the others.
            this.logger.warn({ err: { name: (err as Error).name, message: (err as Error).message }, tenantId, jobId }, 'merging a job’s metrics failed');
          }
        }),
      );
      if (jobs.length < BATCH) return;
    }
  }
}

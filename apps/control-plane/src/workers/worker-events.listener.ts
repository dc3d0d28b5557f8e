import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { createWorkerEventConsumer, type WorkerEvent, type WorkerEventConsumer } from '@weir/protocol';
import type { Logger } from 'pino';
import { CONTROL_PLANE_OPTIONS, ROOT_LOGGER, type ControlPlaneOptions } from '../control-plane-options';
import { MetricsIngestor } from '../metrics/metrics-ingestor';
import { WorkerRegistry } from './worker-registry.service';

/** Feeds worker.* events from BullMQ into the registry, and heartbeats' metrics into the metrics path, while the app runs. */
@Injectable()
export class WorkerEventsListener implements OnApplicationBootstrap, OnModuleDestroy {
  private consumer: WorkerEventConsumer | undefined;

  constructor(
    private readonly registry: WorkerRegistry,
    private readonly metrics: MetricsIngestor,
    @Inject(CONTROL_PLANE_OPTIONS) private readonly options: ControlPlaneOptions,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.consumer = createWorkerEventConsumer(this.options.config, (event) => this.handle(event), {
      logger: this.logger.child({ component: 'worker-events' }),
    });
    await this.consumer.start();
  }

  /** Both are idempotent, so a retry after either fails is harmless. */
  private async handle(event: WorkerEvent): Promise<void> {
    await Promise.all([this.registry.apply(event), this.metrics.ingest(event)]);
  }

  async onModuleDestroy(): Promise<void> {
    await this.consumer?.close();
  }
}

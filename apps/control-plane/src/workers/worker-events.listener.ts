import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { createWorkerEventConsumer, type WorkerEventConsumer } from '@weir/protocol';
import type { Logger } from 'pino';
import { CONTROL_PLANE_OPTIONS, ROOT_LOGGER, type ControlPlaneOptions } from '../control-plane-options';
import { WorkerRegistry } from './worker-registry.service';

/** Feeds worker.* events from BullMQ into the registry while the app runs. */
@Injectable()
export class WorkerEventsListener implements OnApplicationBootstrap, OnModuleDestroy {
  private consumer: WorkerEventConsumer | undefined;

  constructor(
    private readonly registry: WorkerRegistry,
    @Inject(CONTROL_PLANE_OPTIONS) private readonly options: ControlPlaneOptions,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.consumer = createWorkerEventConsumer(this.options.config, (event) => this.registry.apply(event), {
      logger: this.logger.child({ component: 'worker-events' }),
    });
    await this.consumer.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.consumer?.close();
  }
}

import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Logger } from 'pino';
import { CONTROL_PLANE_OPTIONS, ROOT_LOGGER, type ControlPlaneOptions } from '../control-plane-options';
import { WorkerRegistry } from './worker-registry.service';

/**
 * Periodically declares silent workers LOST. Every control-plane instance runs it; the UPDATE is idempotent, so
 * running it twice at once does no harm and needs no leader.
 */
@Injectable()
export class WorkerLivenessSweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly intervalMs: number;

  constructor(
    private readonly registry: WorkerRegistry,
    @Inject(CONTROL_PLANE_OPTIONS) options: ControlPlaneOptions,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {
    this.intervalMs = options.workerSweepIntervalMs ?? options.config.WEIR_WORKER_HEARTBEAT_MS;
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sweep(), this.intervalMs);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One sweep; a sweep still running when the next is due makes that one a no-op. */
  sweep(): Promise<void> {
    this.running ??= this.registry
      .markLost()
      .then(() => undefined)
      .catch((err: Error) => this.logger.warn({ err: { name: err.name, message: err.message } }, 'worker sweep failed'))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }
}

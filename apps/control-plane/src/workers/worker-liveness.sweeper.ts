import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Logger } from 'pino';
import { CONTROL_PLANE_OPTIONS, ROOT_LOGGER, type ControlPlaneOptions } from '../control-plane-options';
import { lostAmong } from './liveness-rule';
import { PendingWorkerEvents } from './pending-worker-events';
import { WorkerRegistry } from './worker-registry.service';

/**
 * Periodically declares silent workers LOST. Every control-plane instance runs it; the UPDATE is idempotent, so
 * running it twice at once does no harm and needs no leader. A worker with an event still in the queue is not silent
 * (PendingWorkerEvents): so a sweep that runs late because this instance's event loop stalled, or right after such a
 * stall while the heartbeats queued meanwhile wait to be applied, or while another instance holds them, spares it.
 */
@Injectable()
export class WorkerLivenessSweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly intervalMs: number;

  constructor(
    private readonly registry: WorkerRegistry,
    private readonly pending: PendingWorkerEvents,
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
      .markLost(async (silent) => lostAmong(silent, await this.pending.workerIds()))
      .then(() => undefined)
      .catch((err: Error) => this.logger.warn({ err: { name: err.name, message: err.message } }, 'worker sweep failed'))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }
}

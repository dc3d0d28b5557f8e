import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Logger } from 'pino';
import { CONTROL_PLANE_OPTIONS, ROOT_LOGGER, type ControlPlaneOptions } from '../control-plane-options';
import { lostAmong, ObservationClock } from './observation-clock';
import { PendingWorkerEvents } from './pending-worker-events';
import { WorkerRegistry } from './worker-registry.service';

/**
 * Periodically declares silent workers LOST. Every control-plane instance runs it; the UPDATE is idempotent, so
 * running it twice at once does no harm and needs no leader. A worker with an event still in the queue is not silent
 * (PendingWorkerEvents), and a silence counts only as far as this instance could observe it (ObservationClock): a
 * sweep that runs late because the event loop stalled, or right after such a stall while the heartbeats queued
 * meanwhile are still being applied, spares the workers and leaves them to a later one.
 */
@Injectable()
export class WorkerLivenessSweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private sweepTimer: NodeJS.Timeout | undefined;
  private tickTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly intervalMs: number;

  constructor(
    private readonly registry: WorkerRegistry,
    private readonly clock: ObservationClock,
    private readonly pending: PendingWorkerEvents,
    @Inject(CONTROL_PLANE_OPTIONS) options: ControlPlaneOptions,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {
    this.intervalMs = options.workerSweepIntervalMs ?? options.config.WEIR_WORKER_HEARTBEAT_MS;
  }

  onApplicationBootstrap(): void {
    this.clock.tick(Date.now());
    // The stall detector: a timer that is due every tick; how late it fires is how long the event loop stalled.
    this.tickTimer = setInterval(() => this.clock.tick(Date.now()), this.clock.tickMs);
    this.tickTimer.unref();
    this.sweepTimer = setInterval(() => void this.sweep(), this.intervalMs);
    this.sweepTimer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.sweepTimer);
    clearInterval(this.tickTimer);
    await this.running;
  }

  /** One sweep; a sweep still running when the next is due makes that one a no-op. */
  sweep(): Promise<void> {
    // A stall that delayed this very sweep counts before anyone is judged.
    this.clock.tick(Date.now());
    this.running ??= this.registry
      .markLost(async (silent) => lostAmong(silent, await this.pending.workerIds(), this.clock, Date.now()))
      .then(() => undefined)
      .catch((err: Error) => this.logger.warn({ err: { name: err.name, message: err.message } }, 'worker sweep failed'))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }
}

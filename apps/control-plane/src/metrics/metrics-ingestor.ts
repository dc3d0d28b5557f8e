import { Inject, Injectable } from '@nestjs/common';
import type { WorkerEvent } from '@weir/protocol';
import type { Logger } from 'pino';
import { CONTROL_PLANE_OPTIONS, ROOT_LOGGER, type ControlPlaneOptions } from '../control-plane-options';
import { STALE_HEARTBEAT_MS } from '../workers/worker-registry.service';
import { MetricsStore } from './metrics-store';

/** A subtask silent this long drops out of its job's figures and /metrics (its worker died or it stopped). */
export function staleAfterMs(options: ControlPlaneOptions): number {
  return Math.max(10_000, 3 * options.config.WEIR_WORKER_HEARTBEAT_MS);
}

/**
 * The metrics side of the worker-events consumer: the registry's listener hands every event here as well (one
 * consumer owns the queue). Only heartbeats carry metrics; a backlogged heartbeat is dropped as the registry
 * drops it, since its figures describe the past.
 */
@Injectable()
export class MetricsIngestor {
  private readonly staleAfterMs: number;

  constructor(
    private readonly store: MetricsStore,
    @Inject(CONTROL_PLANE_OPTIONS) options: ControlPlaneOptions,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {
    this.staleAfterMs = staleAfterMs(options);
  }

  async ingest(event: WorkerEvent, now = Date.now()): Promise<void> {
    if (event.type !== 'worker.heartbeat' || !event.metrics?.length) return;
    if (now - event.sentAt > STALE_HEARTBEAT_MS) return;
    await this.store.record(event.metrics, now, this.staleAfterMs);
    this.logger.trace({ workerId: event.worker.workerId, snapshots: event.metrics.length }, 'metrics recorded');
  }
}

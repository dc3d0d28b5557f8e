import { Inject, Injectable } from '@nestjs/common';
import type { WorkerEvent } from '@weir/protocol';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../control-plane-options';
import { NotFoundProblem } from '../problems/problem.exception';
import type { Page } from '../pagination/cursor';
import { toPage } from '../pagination/cursor';
import type { Worker, WorkerStatus } from './worker';
import type { SilentWorker } from './liveness-rule';
import { WorkersRepository } from './workers.repository';

/**
 * Heartbeats older than this are dropped unapplied: after a control-plane outage the queue holds a backlog, and
 * replaying it would mark long-dead workers ALIVE again for three intervals. Generous, so that modest clock skew
 * between a worker and the control plane never drops a live heartbeat. started/stopping are always applied.
 */
export const STALE_HEARTBEAT_MS = 60_000;

/** The fleet as the control plane knows it: fed by worker events, read by the API. */
@Injectable()
export class WorkerRegistry {
  constructor(
    private readonly workers: WorkersRepository,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {}

  async apply(event: WorkerEvent, now = Date.now()): Promise<void> {
    const fields = { workerId: event.worker.workerId, type: event.type, seq: event.seq };
    if (event.type === 'worker.heartbeat' && now - event.sentAt > STALE_HEARTBEAT_MS) {
      this.logger.debug({ ...fields, ageMs: now - event.sentAt }, 'stale heartbeat dropped');
      return;
    }
    const worker = await this.workers.applyEvent(event);
    if (!worker) {
      this.logger.debug(fields, 'stale worker event ignored');
    } else if (event.type !== 'worker.heartbeat') {
      this.logger.info({ ...fields, status: worker.status, host: worker.host, slots: worker.slots }, 'worker registered event');
    }
  }

  /**
   * Declares LOST the workers silent beyond their timeout that `judge` confirms (it spares those with events still
   * in the queue); the others are left for a later sweep.
   */
  async markLost(judge: (silent: readonly SilentWorker[]) => Promise<readonly SilentWorker[]>): Promise<string[]> {
    const silent = await this.workers.silentWorkers();
    if (!silent.length) return [];
    const judged = await judge(silent);
    if (judged.length < silent.length) {
      const spared = silent.filter((w) => !judged.includes(w)).map((w) => ({ id: w.id, silentMs: Math.round(w.silentMs) }));
      this.logger.info({ workers: spared }, 'silent workers not declared LOST yet: they have events not applied yet (or the queue could not be read)');
    }
    const lost = await this.workers.markLost(judged.map((w) => w.id));
    if (lost.length) this.logger.warn({ workerIds: lost }, 'workers declared LOST: no heartbeat for three intervals (3 s at least), none pending');
    return lost;
  }

  async get(id: string): Promise<Worker> {
    const worker = await this.workers.find(id);
    if (!worker) throw new NotFoundProblem('worker', id);
    return worker;
  }

  async list(limit: number, afterId: string | undefined, status: WorkerStatus | undefined): Promise<Page<Worker>> {
    const rows = await this.workers.list(limit + 1, afterId, status);
    return toPage(rows, limit, (w) => w.id);
  }
}

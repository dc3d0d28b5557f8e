import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import { WORKER_EVENTS_QUEUE } from '@weir/protocol';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { WEIR_CONFIG } from '../control-plane-options';

/** Events looked at per sweep; a longer backlog means the control plane is behind on everyone. */
export const PENDING_LOOKED_AT = 1_000;
const ANSWER_WITHIN_MS = 1_000;

/**
 * Who has spoken without being heard yet: workers with an event still in the worker-events queue (waiting, being
 * handled, or retried after a failure), on any control-plane instance. Asked only when a sweep has silent workers.
 * Clock-free, so it covers any instance's stall, this one's or another holding a worker's heartbeats.
 */
@Injectable()
export class PendingWorkerEvents implements OnModuleDestroy {
  private queue: Queue | undefined;
  private redis: Redis | undefined;

  constructor(@Inject(WEIR_CONFIG) private readonly config: WeirConfig) {}

  /**
   * The ids of workers with a pending event, 'all' when the backlog is longer than PENDING_LOOKED_AT or Redis did
   * not answer in time (then nobody's silence can be told from the control plane's own deafness).
   */
  async workerIds(): Promise<ReadonlySet<string> | 'all'> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'all'>((resolve) => {
      timer = setTimeout(() => resolve('all'), ANSWER_WITHIN_MS);
    });
    try {
      return await Promise.race([this.lookUp(), late]);
    } catch {
      return 'all';
    } finally {
      clearTimeout(timer);
    }
  }

  private async lookUp(): Promise<ReadonlySet<string> | 'all'> {
    const jobs = await this.events().getJobs(['waiting', 'active', 'prioritized', 'delayed'], 0, PENDING_LOOKED_AT);
    if (jobs.length > PENDING_LOOKED_AT) return 'all';
    const ids = new Set<string>();
    for (const job of jobs) {
      const workerId = (job?.data as { worker?: { workerId?: unknown } } | undefined)?.worker?.workerId;
      if (typeof workerId === 'string') ids.add(workerId);
    }
    return ids;
  }

  private events(): Queue {
    if (!this.queue) {
      this.redis = new Redis(this.config.WEIR_REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      this.redis.on('error', () => undefined); // a failed look-up spares everyone for one sweep
      this.queue = new Queue(WORKER_EVENTS_QUEUE, { connection: this.redis, prefix: this.config.WEIR_QUEUE_PREFIX });
      this.queue.on('error', () => undefined);
    }
    return this.queue;
  }

  async onModuleDestroy(): Promise<void> {
    await this.queue?.close();
    this.redis?.disconnect();
  }
}

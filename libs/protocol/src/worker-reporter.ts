import { hostname } from 'node:os';
import { Queue } from 'bullmq';
import type { WeirConfig } from '@weir/config';
import type { z } from 'zod';
import { producerConnection, withTimeout, type ProtocolConfig } from './connection';
import { defaultLogger, errorFields, type ProtocolLogger } from './logger';
import {
  runningSubtaskSchema,
  workerDescriptorSchema,
  workerEventSchema,
  type RunningSubtask,
  type WorkerDescriptor,
  type WorkerEvent,
} from './messages/worker-events';
import { metricsSnapshotSchema, type MetricsSnapshotMessage } from './messages/metrics-snapshot';
import { WORKER_EVENTS_QUEUE } from './names';
import { parseMessage } from './validate';

export type WorkerReporterConfig = ProtocolConfig & Pick<WeirConfig, 'WEIR_WORKER_HEARTBEAT_MS'>;

/** The worker's identity; host, pid and startedAt default to this process. */
export interface WorkerIdentity {
  readonly workerId: string;
  readonly slots: number;
  readonly version: string;
  readonly host?: string;
  readonly pid?: number;
  readonly startedAt?: number;
}

/** What the worker runs right now, read at every heartbeat. */
export interface WorkerStatus {
  readonly runningSubtasks: readonly RunningSubtask[];
  readonly metrics?: readonly MetricsSnapshotMessage[];
}

export interface WorkerReporterOptions {
  /** Called once per heartbeat; must be cheap and synchronous. Without it the worker reports no subtasks. */
  readonly status?: () => WorkerStatus;
  readonly logger?: ProtocolLogger;
}

export interface WorkerReporter {
  readonly descriptor: WorkerDescriptor;
  /** Announces the worker (worker.started) and starts heartbeating. Never rejects: Redis trouble is logged and retried. */
  start(): Promise<void>;
  /** Stops heartbeating and sends worker.stopping (bounded wait). Never rejects. */
  stop(reason?: string): Promise<void>;
}

export function createWorkerReporter(
  config: WorkerReporterConfig,
  identity: WorkerIdentity,
  options: WorkerReporterOptions = {},
): WorkerReporter {
  const descriptor = parseMessage(
    workerDescriptorSchema,
    {
      workerId: identity.workerId,
      host: identity.host ?? hostname(),
      pid: identity.pid ?? process.pid,
      slots: identity.slots,
      version: identity.version,
      startedAt: identity.startedAt ?? Date.now(),
      heartbeatMs: config.WEIR_WORKER_HEARTBEAT_MS,
    },
    'worker identity',
  );
  return new BullWorkerReporter(config, descriptor, options.status ?? (() => ({ runningSubtasks: [] })), options.logger ?? defaultLogger());
}

type Phase = 'idle' | 'running' | 'stopped';

function validItems<S extends z.ZodType>(items: readonly unknown[], schema: S, onInvalid: (item: unknown) => void): z.infer<S>[] {
  const valid: z.infer<S>[] = [];
  for (const item of items) {
    const parsed = schema.safeParse(item);
    if (parsed.success) valid.push(parsed.data);
    else onInvalid(item);
  }
  return valid;
}

class BullWorkerReporter implements WorkerReporter {
  private readonly queue: Queue;
  private readonly sendTimeoutMs: number;
  private phase: Phase = 'idle';
  private announced = false;
  private seq = 0;
  private failing = false;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();
  private lastRunning: RunningSubtask[] = [];

  constructor(
    config: WorkerReporterConfig,
    readonly descriptor: WorkerDescriptor,
    private readonly status: () => WorkerStatus,
    private readonly logger: ProtocolLogger,
  ) {
    this.queue = new Queue(WORKER_EVENTS_QUEUE, { connection: producerConnection(config), prefix: config.WEIR_QUEUE_PREFIX });
    // Without a listener an 'error' event would crash the worker; send failures are reported below instead.
    this.queue.on('error', (err) => this.logger.debug({ ...errorFields(err) }, 'worker-events queue connection error'));
    this.sendTimeoutMs = Math.max(1_000, descriptor.heartbeatMs);
  }

  async start(): Promise<void> {
    if (this.phase !== 'idle') return;
    this.phase = 'running';
    this.inFlight = this.beat();
    await this.inFlight;
    this.schedule();
  }

  async stop(reason?: string): Promise<void> {
    if (this.phase === 'stopped') return;
    const wasRunning = this.phase === 'running';
    this.phase = 'stopped';
    clearTimeout(this.timer);
    await this.inFlight;
    if (wasRunning) {
      const ok = await this.send({ ...this.base(), type: 'worker.stopping', ...(reason ? { reason } : {}) });
      if (ok) this.logger.info({ workerId: this.descriptor.workerId }, 'worker.stopping sent');
    }
    try {
      await withTimeout(this.queue.close(), 5_000, 'closing the worker-events queue');
    } catch (err) {
      this.logger.warn({ ...errorFields(err) }, 'worker-events queue did not close cleanly');
      await this.queue.disconnect().catch(() => undefined);
    }
  }

  private schedule(): void {
    if (this.phase !== 'running') return;
    // A chain of timeouts, not an interval: a slow send delays the next beat instead of piling up behind it.
    this.timer = setTimeout(() => {
      this.inFlight = this.beat().finally(() => this.schedule());
    }, this.descriptor.heartbeatMs);
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    const { runningSubtasks, metrics } = this.readStatus();
    const event: WorkerEvent = this.announced
      ? { ...this.base(), type: 'worker.heartbeat', runningSubtasks, ...(metrics.length ? { metrics } : {}) }
      : { ...this.base(), type: 'worker.started', runningSubtasks };
    if (await this.send(event)) this.announced = true;
  }

  private base() {
    return { v: 1 as const, worker: this.descriptor, seq: this.seq++, sentAt: Date.now() };
  }

  /**
   * Drops (and logs) items that do not validate, so one bad snapshot cannot silence the heartbeat. When the callback
   * throws, the last good list of subtasks is reported again: reporting none would tell the control plane that the
   * worker's subtasks are gone.
   */
  private readStatus(): { runningSubtasks: RunningSubtask[]; metrics: MetricsSnapshotMessage[] } {
    let status: WorkerStatus;
    try {
      status = this.status();
    } catch (err) {
      this.logger.error({ ...errorFields(err) }, 'worker status callback threw; reporting the last known subtasks');
      return { runningSubtasks: this.lastRunning, metrics: [] };
    }
    const onInvalid = (what: string) => (item: unknown) => this.logger.error({ item }, `invalid ${what} left out of the heartbeat`);
    this.lastRunning = validItems(status.runningSubtasks, runningSubtaskSchema, onInvalid('running subtask'));
    return {
      runningSubtasks: this.lastRunning,
      metrics: validItems(status.metrics ?? [], metricsSnapshotSchema, onInvalid('metrics snapshot')),
    };
  }

  /** True when Redis took the event. Failures are logged once per outage, not once per beat. */
  private async send(event: WorkerEvent): Promise<boolean> {
    try {
      const checked = parseMessage(workerEventSchema, event, event.type);
      await withTimeout(
        this.queue.add(checked.type, checked, {
          attempts: 3,
          backoff: { type: 'fixed', delay: 500 },
          removeOnComplete: true,
          removeOnFail: { count: 1000 },
        }),
        this.sendTimeoutMs,
        `sending ${event.type}`,
      );
      if (this.failing) this.logger.info({ workerId: this.descriptor.workerId }, 'worker events flow again');
      this.failing = false;
      return true;
    } catch (err) {
      if (!this.failing) {
        this.logger.warn(
          { workerId: this.descriptor.workerId, type: event.type, ...errorFields(err) },
          'could not send worker event; retrying on the next heartbeat',
        );
      }
      this.failing = true;
      return false;
    }
  }
}

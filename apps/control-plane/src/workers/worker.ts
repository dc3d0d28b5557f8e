import type { RunningSubtask } from '@weir/protocol';

export const WORKER_STATUSES = ['ALIVE', 'LOST', 'STOPPED'] as const;
export type WorkerStatus = (typeof WORKER_STATUSES)[number];

/** A worker as the registry last heard it. */
export interface Worker {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly slots: number;
  readonly version: string;
  readonly status: WorkerStatus;
  readonly startedAt: Date;
  readonly lastSeenAt: Date;
  readonly statusChangedAt: Date;
  readonly heartbeatMs: number;
  readonly runningSubtasks: readonly RunningSubtask[];
}

import { z } from 'zod';
import { epochMs, protocolVersion, subtaskRefSchema, workerId } from './common';
import { metricsSnapshotSchema } from './metrics-snapshot';

/** Who a worker process is. `startedAt` tells two incarnations of the same worker id apart. */
export const workerDescriptorSchema = z.strictObject({
  workerId,
  host: z.string().min(1).max(255),
  pid: z.number().int().positive(),
  slots: z.number().int().min(1).max(256),
  version: z.string().min(1).max(64),
  startedAt: epochMs,
  /** The worker's own heartbeat interval: the control plane declares it lost after three silent intervals. */
  heartbeatMs: z.number().int().min(100).max(600_000),
});
export type WorkerDescriptor = z.infer<typeof workerDescriptorSchema>;

export const runningSubtaskSchema = subtaskRefSchema.extend({
  /**
   * FAILED: the job failed on its own (its code, a bad restore) and reported why. LOST: its job host died without a
   * word (killed, out of memory): nothing says the job cannot run, so the control plane recovers the run.
   */
  state: z.enum(['STARTING', 'RUNNING', 'STOPPING', 'FAILED', 'LOST']),
  /** The job host process of its run that runs it (run-subtasks `process.index`); absent: 0. */
  process: z.number().int().min(0).max(4095).optional(),
  /** FAILED: why, as the job host or the worker said it (the job's error, its heap or stall limit). */
  failure: z.string().max(1_000).optional(),
});
export type RunningSubtask = z.infer<typeof runningSubtaskSchema>;

const eventBase = {
  v: protocolVersion,
  worker: workerDescriptorSchema,
  /** Per incarnation, strictly increasing: lets the control plane drop events that arrive out of order. */
  seq: z.number().int().nonnegative(),
  sentAt: epochMs,
};

export const workerStartedSchema = z.strictObject({
  ...eventBase,
  type: z.literal('worker.started'),
  runningSubtasks: z.array(runningSubtaskSchema).max(4096),
});

export const workerHeartbeatSchema = z.strictObject({
  ...eventBase,
  type: z.literal('worker.heartbeat'),
  runningSubtasks: z.array(runningSubtaskSchema).max(4096),
  metrics: z.array(metricsSnapshotSchema).max(4096).optional(),
});

export const workerStoppingSchema = z.strictObject({
  ...eventBase,
  type: z.literal('worker.stopping'),
  reason: z.string().max(500).optional(),
});

/** Worker → control plane, on the shared worker-events queue. */
export const workerEventSchema = z.discriminatedUnion('type', [
  workerStartedSchema,
  workerHeartbeatSchema,
  workerStoppingSchema,
]);
export type WorkerEvent = z.infer<typeof workerEventSchema>;
export type WorkerStarted = z.infer<typeof workerStartedSchema>;
export type WorkerHeartbeat = z.infer<typeof workerHeartbeatSchema>;
export type WorkerStopping = z.infer<typeof workerStoppingSchema>;
export type WorkerEventType = WorkerEvent['type'];

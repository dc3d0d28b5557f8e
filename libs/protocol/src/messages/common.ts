import { z } from 'zod';
import { WORKER_ID_PATTERN } from '../names';

/** Bumped when a message changes incompatibly; a reader rejects versions it does not know. */
export const PROTOCOL_VERSION = 1;
export const protocolVersion = z.literal(PROTOCOL_VERSION);

export const workerId = z.string().regex(WORKER_ID_PATTERN, 'expected 1-128 of [A-Za-z0-9._-]');
/** Tenant, job and operator ids: short, printable, safe in S3 keys and Kafka topic names. */
export const resourceId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected 1-64 of [A-Za-z0-9_-]');
export const epochMs = z.number().int().nonnegative();
export const subtaskIndex = z.number().int().min(0).max(32767);

/** One subtask of one operator of one tenant's job: the unit a worker runs. */
export const subtaskRefSchema = z.strictObject({
  tenantId: resourceId,
  jobId: resourceId,
  operatorId: resourceId,
  subtask: subtaskIndex,
});
export type SubtaskRef = z.infer<typeof subtaskRefSchema>;

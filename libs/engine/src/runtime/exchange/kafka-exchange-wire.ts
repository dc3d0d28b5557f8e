/**
 * The records of the Kafka exchange (one internal topic per keyed operator, one partition per key group). Every
 * record is a msgpack array `[kind, incarnation, channel, ...]`:
 * - `incarnation` is the run that wrote it (the deployment's run number). A reader skips records of older runs: after
 *   a restore, what the previous run wrote past the checkpoint's barrier is written again by the replaying sources,
 *   and a zombie of a previous run (a job host thought dead) cannot reach the new run's subtasks.
 * - `channel` is the writing upstream subtask's index; control (watermarks, idleness, ends, barriers) travels per
 *   channel in every partition, in order with the data. A data barrier also says how many subtasks its stage has
 *   (`[BARRIER, incarnation, channel, checkpointId, senders]`): a live rescale changes that between checkpoints.
 */
import { jobInternalTopicPrefix } from '../topic-names';

export const DATA = 0;
export const WATERMARK = 1;
export const IDLE = 2;
export const END = 3;
export const BROADCAST = 4;
export const BROADCAST_END = 5;
export const BARRIER = 6;
export const BROADCAST_BARRIER = 7;

/** `[kind, incarnation, channel, ...rest]` as read back. */
export type WireMessage = unknown[] & { 0: number; 1: number; 2: number };

export function isBroadcastKind(kind: number): boolean {
  return kind === BROADCAST || kind === BROADCAST_END || kind === BROADCAST_BARRIER;
}

export function exchangeTopic(tenantId: string, jobId: string, operatorId: string): string {
  return `${jobInternalTopicPrefix(tenantId, jobId)}${operatorId}.exchange`.replace(/[^A-Za-z0-9._-]/g, '_');
}

/**
 * What the runtime needs from the world, as narrow interfaces: a clock, dead letters and per-subtask metrics.
 * Side effects are injected so the test driver can run a job without any service.
 */
import type { SubtaskMetrics } from '@weir/metrics';

export interface Clock {
  /** Processing time, epoch ms. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface DeadLetter {
  readonly tenantId: string;
  readonly jobId: string;
  readonly operatorId: string;
  readonly subtask: number;
  /** decode | key | user-function */
  readonly reason: 'decode' | 'key' | 'user-function';
  readonly error: string;
  /** The original bytes when the record came from a source, else the record value encoded as JSON. */
  readonly payload: Buffer;
  readonly timestamp: number;
}

/** Collects dead letters during a batch; `emit` writes them (one batched write) before the batch's outputs. */
export interface DeadLetterQueue {
  add(letter: DeadLetter): void;
  emit(): Promise<void>;
}

/** Per-subtask metrics: libs/metrics' SubtaskMetrics (synchronous, O(1) per record or batch). */
export type SubtaskMetricsRecorder = SubtaskMetrics;

export function encodeForDeadLetter(value: unknown, raw: Buffer | undefined): Buffer {
  if (raw) return raw;
  if (Buffer.isBuffer(value)) return value;
  try {
    return Buffer.from(JSON.stringify(value) ?? 'undefined', 'utf8');
  } catch {
    return Buffer.from(String(value), 'utf8');
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** The identity and side effects a subtask's parts share. */
export interface ChainEnvLike {
  readonly tenantId: string;
  readonly jobId: string;
  readonly subtask: number;
  readonly clock: Clock;
  readonly deadLetters: DeadLetterQueue;
  readonly metrics: SubtaskMetricsRecorder;
}

/** What failed, where: a record's dead letter, with the subtask's identity from `env`. */
export interface DeadLetterCause {
  readonly operatorId: string;
  readonly reason: DeadLetter['reason'];
  readonly error: unknown;
}

/** Sends one record to the job's dead letters: its original bytes (or its value as JSON) and why. */
export function sendToDeadLetters(env: ChainEnvLike, cause: DeadLetterCause, value: unknown, raw: Buffer | undefined, timestamp: number): void {
  env.deadLetters.add({
    tenantId: env.tenantId,
    jobId: env.jobId,
    operatorId: cause.operatorId,
    subtask: env.subtask,
    reason: cause.reason,
    error: errorMessage(cause.error),
    payload: encodeForDeadLetter(value, raw),
    timestamp,
  });
}

/**
 * Messages between the worker (supervisor) and a job host child process. The child runs one tenant's job; the
 * supervisor never loads tenant code itself.
 */
import type { SubtaskMetricsSnapshot } from '@weir/metrics';

export interface StartJobMessage {
  readonly type: 'start';
  readonly tenantId: string;
  readonly jobId: string;
  /** Local path of the verified bundle file. */
  readonly bundlePath: string;
  /** Subtasks per stage (stage root operator id → count). */
  readonly parallelism: Readonly<Record<string, number>>;
  readonly maxParallelism: number;
  /** Where this job's LSM state lives on the worker's disk. */
  readonly stateDir: string;
  readonly deadLetterTopic: string;
}

export interface StopJobMessage {
  readonly type: 'stop';
}

export type ToJobHost = StartJobMessage | StopJobMessage;

export type FromJobHost =
  | { readonly type: 'started'; readonly stages: readonly { readonly operatorId: string; readonly parallelism: number }[] }
  | { readonly type: 'metrics'; readonly snapshots: readonly SubtaskMetricsSnapshot[] }
  | { readonly type: 'finished' }
  | { readonly type: 'failed'; readonly message: string };

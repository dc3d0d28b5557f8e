/**
 * What one job host may use, the same for every job host of a worker (a spare is forked before its job is known).
 * CPU needs no limit of its own: a job host is one event loop with no threads it may start (the permission model),
 * so it uses at most one core, its slot's. A heap limit stops a job that allocates without end; a stall limit stops
 * one whose code never yields (an endless loop), which would otherwise hold its slot and stall its run's checkpoints.
 * Either fails the job with the reason, and only that job: the worker and every other job host run on.
 */
export interface JobHostLimits {
  /** V8's old-space limit of a job host, in MiB (`--max-old-space-size`); state in the LSM store is outside it. */
  readonly maxHeapMb: number;
  /** How long a job host's event loop may go without answering (its `alive` every ALIVE_INTERVAL_MS) before it is killed. */
  readonly stallTimeoutMs: number;
}

/** How often a job host says it is alive: from a timer, so it stops when the event loop is blocked. */
export const ALIVE_INTERVAL_MS = 1_000;

export const DEFAULT_JOB_HOST_LIMITS: JobHostLimits = { maxHeapMb: 2_048, stallTimeoutMs: 30_000 };

/** What V8 prints as it aborts a process whose heap reached its limit. */
const HEAP_EXHAUSTED = /JavaScript heap out of memory|Reached heap limit/;

export function heapExhausted(stderrTail: string): boolean {
  return HEAP_EXHAUSTED.test(stderrTail);
}

export function heapLimitReason(limits: JobHostLimits): string {
  return `the job ran out of memory: its job host reached its heap limit of ${limits.maxHeapMb} MiB (WEIR_JOB_HOST_MAX_HEAP_MB) and was stopped`;
}

export function stallReason(limits: JobHostLimits, stalledMs: number): string {
  return `the job's code blocked its job host for ${(stalledMs / 1000).toFixed(1)} s without yielding (an endless loop?), past the limit of ${limits.stallTimeoutMs / 1000} s (WEIR_JOB_HOST_STALL_TIMEOUT_MS): the job host was killed`;
}

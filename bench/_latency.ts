/**
 * Shared helpers for Weir's benchmarks (rules: /work/shared/benchmarks.md and docs/metrics.md).
 *
 * - `runFixedRate` sends on a fixed schedule and hands each batch the SCHEDULED send time of every event, which
 *   the benchmark stamps into the event. Latency measured from that stamp includes any time the generator itself
 *   was held up (a stalled broker, a GC pause), so a stall shows up as latency instead of as fewer samples:
 *   no coordinated omission. After a stall the generator catches up in batches of at most `maxBatch`.
 * - Latency goes into `LatencyRecorder` (HDR, µs resolution) from @weir/metrics, the same code the engine uses.
 * - `printTable` for people, `printJsonLine` (last line of output) for scripts, `ratio` for Weir ÷ baseline.
 */
import { LatencyRecorder, type LatencySummary } from '@weir/metrics';

export { LatencyRecorder, type LatencySummary };

/** Epoch milliseconds with sub-millisecond precision (monotonic within the process). */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export interface FixedRateOptions {
  readonly ratePerSec: number;
  /** Measured part of the run. */
  readonly durationMs: number;
  /** Events sent before the measured part, at the same rate; their sequence numbers are below `warmupEvents`. */
  readonly warmupMs?: number;
  /** Most events handed to one `send` call (default 1000). */
  readonly maxBatch?: number;
  /** Stops early (the report says how many were sent). */
  readonly signal?: AbortSignal;
}

/** A batch of due events: sequence numbers firstSeq … firstSeq+count-1 and their scheduled send times. */
export interface ScheduledBatch {
  readonly firstSeq: number;
  readonly count: number;
  /** scheduledMs[i] is event (firstSeq + i)'s scheduled time, epoch ms. Reused between calls: copy what you keep. */
  readonly scheduledMs: Float64Array;
}

export interface FixedRateReport {
  readonly sent: number;
  readonly warmupEvents: number;
  readonly startMs: number;
  readonly endMs: number;
  /** Worst delay between an event's scheduled time and the start of the send call that carried it. */
  readonly maxSendDelayMs: number;
}

/** Event seq is scheduled at startMs + seq × 1000 ÷ rate. */
export class FixedRateSchedule {
  readonly intervalMs: number;

  constructor(
    readonly startMs: number,
    readonly ratePerSec: number,
    readonly total: number,
  ) {
    if (!(ratePerSec > 0) || !Number.isInteger(total) || total < 0) {
      throw new RangeError(`bad schedule: ${ratePerSec} events/s, ${total} events`);
    }
    this.intervalMs = 1000 / ratePerSec;
  }

  scheduledAt(seq: number): number {
    return this.startMs + seq * this.intervalMs;
  }

  /** How many events (from seq 0) are due at `atMs`. */
  dueBy(atMs: number): number {
    if (atMs < this.startMs) return 0;
    return Math.min(this.total, Math.floor((atMs - this.startMs) / this.intervalMs) + 1);
  }
}

/**
 * Sends `ratePerSec × (warmupMs + durationMs) / 1000` events on schedule. `send` may be async (a producer
 * acknowledgement); the schedule does not wait for it: events that fell due meanwhile go out in the next batches,
 * stamped with their original scheduled times.
 */
export async function runFixedRate(
  options: FixedRateOptions,
  send: (batch: ScheduledBatch) => void | Promise<void>,
): Promise<FixedRateReport> {
  const warmupEvents = Math.floor((options.ratePerSec * (options.warmupMs ?? 0)) / 1000);
  const total = warmupEvents + Math.floor((options.ratePerSec * options.durationMs) / 1000);
  const maxBatch = options.maxBatch ?? 1000;
  const schedule = new FixedRateSchedule(nowMs() + 1, options.ratePerSec, total);
  const scheduledMs = new Float64Array(maxBatch);
  let sent = 0;
  let maxSendDelayMs = 0;
  while (sent < total && options.signal?.aborted !== true) {
    const now = nowMs();
    const due = schedule.dueBy(now);
    if (due > sent) {
      const count = Math.min(due - sent, maxBatch);
      for (let i = 0; i < count; i++) scheduledMs[i] = schedule.scheduledAt(sent + i);
      maxSendDelayMs = Math.max(maxSendDelayMs, now - scheduledMs[0]);
      await send({ firstSeq: sent, count, scheduledMs });
      sent += count;
      continue;
    }
    const waitMs = schedule.scheduledAt(sent) - now;
    // Sleep, never spin: yielding with setImmediate until due kept a whole core busy at 1,000 events/s, taken from
    // the system under test on a 2-core machine. A timer wakes up to ~1 ms late; latency counts from the scheduled
    // time, so that lateness is charged to the system measured, never hidden.
    await new Promise<void>((resolve) => setTimeout(resolve, Math.max(1, Math.ceil(waitMs))));
  }
  return { sent, warmupEvents, startMs: schedule.startMs, endMs: nowMs(), maxSendDelayMs };
}

/** The median of the finite values (the mean of the middle two for an even count); NaN when there are none. */
export function median(values: readonly number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** a ÷ b (e.g. Weir ÷ baseline); NaN when b is 0, so a missing baseline never reads as a result. */
export function ratio(a: number, b: number): number {
  return b === 0 ? Number.NaN : a / b;
}

/** The latency columns every benchmark reports (ms): p50, p99, p99.9, max, and the sample count. */
export function latencyColumns(summary: LatencySummary, prefix = ''): Record<string, number> {
  return {
    [`${prefix}p50_ms`]: summary.p50,
    [`${prefix}p99_ms`]: summary.p99,
    [`${prefix}p999_ms`]: summary.p999,
    [`${prefix}max_ms`]: summary.max,
    [`${prefix}samples`]: summary.count,
  };
}

export type Cell = string | number | boolean | null | undefined;

/** Prints rows as an aligned text table (columns: union of keys, in first-seen order; numbers right-aligned). */
export function printTable(rows: readonly Readonly<Record<string, Cell>>[], title?: string): void {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const cells = rows.map((row) => columns.map((column) => formatCell(row[column])));
  const widths = columns.map((column, c) => Math.max(column.length, ...cells.map((line) => line[c].length)));
  const numeric = columns.map((column) => rows.some((row) => typeof row[column] === 'number'));
  const pad = (text: string, c: number) => (numeric[c] ? text.padStart(widths[c]) : text.padEnd(widths[c]));
  const lines = [
    columns.map(pad).join('  '),
    widths.map((width) => '-'.repeat(width)).join('  '),
    ...cells.map((line) => line.map(pad).join('  ')),
  ];
  if (title !== undefined) lines.unshift(title);
  process.stdout.write(lines.join('\n') + '\n');
}

/** Prints one line of JSON (non-finite numbers become null), meant as a benchmark's last line of output. */
export function printJsonLine(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n');
}

function formatCell(value: Cell): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'number') return String(value);
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return String(value);
  const digits = Math.abs(value) >= 100 ? 1 : Math.abs(value) >= 1 ? 2 : 3;
  return value.toFixed(digits);
}

/**
 * skew's engine figures: the same Zipf stream through the engine's real path (keyBy → a splittable window's partial
 * operator, then its merge) in one process, every keyed subtask capped at `cap` records/s by time (the engine's
 * `subtask.max-records-per-second`: a subtask waits out its share, it does not spin), so that n subtasks stand for n
 * machines on this 2-core one. Static hashing (the default contiguous ranges, nothing split) against Weir's layout
 * (the partitioner's converged decision for that stream: its key-group moves made with moveKeyGroups, its split keys
 * with splitKeys, each other subtask's part in the first key group it owns).
 * - cappedThroughput: records ÷ the time the capped subtasks take to handle them, fed in chunks as fast as they take
 *   them (each chunk's time is its most loaded subtask's share ÷ cap); one hour windows, so nothing fires meanwhile.
 * - cappedLatency: the stream fed at a fixed rate in event time = processing time, 100 ms tumbling windows, the
 *   watermark following every 20 ms tick; a window's latency = when its result reaches the sink − its end.
 */
import { build } from 'hdr-histogram-js';
import { aggregate, callbackSink, defineJob, memoryIoOf, memorySource, memorySink, runJob, tumbling, type KeySplit, type SinkSpec, type WindowResult } from '@weir/engine';
import { createStateBackend } from '@weir/state';
import type { PartitionLayout } from '@weir/partitioner';

export interface ThroughputRun {
  readonly recordsPerSec: number;
  readonly seconds: number;
}

const CHUNK = 20_000;

/** Records/s of the capped job over `names` (one record per entry), routed by `layout` (null: static hashing). */
export async function cappedThroughput(names: readonly string[], n: number, maxParallelism: number, cap: number, layout: PartitionLayout | null): Promise<ThroughputRun> {
  const running = await start(n, maxParallelism, cap, 3_600_000, memorySink());
  try {
    if (layout) await apply(running, layout);
    const io = memoryIoOf(running);
    const started = performance.now();
    for (let at = 0; at < names.length; at += CHUNK) {
      io.push('in', names.slice(at, at + CHUNK).map((k) => ({ value: { k }, timestamp: 0 })));
      await io.quiet();
    }
    const seconds = (performance.now() - started) / 1000;
    return { recordsPerSec: names.length / seconds, seconds };
  } finally {
    await running.stop();
  }
}

export interface LatencyRun {
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly windows: number;
}

const TICK_MS = 20;
const WINDOW_MS = 100;

/** Event-time latency of the capped job's window results with `names` fed at `perSecond` (see the file's comment). */
export async function cappedLatency(
  names: readonly string[],
  n: number,
  maxParallelism: number,
  cap: number,
  perSecond: number,
  layout: PartitionLayout | null,
): Promise<LatencyRun> {
  const latency = build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000, numberOfSignificantValueDigits: 3 });
  // Windows that end before the first tick are partial (the feed began inside them): left out.
  let firstEnd = Number.POSITIVE_INFINITY;
  let maxMs = 0;
  const sink = callbackSink<WindowResult<string, number>>((batch) => {
    const now = Date.now();
    for (const r of batch) {
      const end = r.timestamp + 1;
      if (end <= firstEnd) continue;
      latency.recordValue(Math.max(1, now - end));
      maxMs = Math.max(maxMs, now - end);
    }
  });
  const running = await start(n, maxParallelism, cap, WINDOW_MS, sink);
  try {
    if (layout) await apply(running, layout);
    const io = memoryIoOf(running);
    const started = Date.now();
    firstEnd = started - (started % WINDOW_MS) + WINDOW_MS;
    let sent = 0;
    while (sent < names.length) {
      const now = Date.now();
      const due = Math.min(names.length, Math.floor(((now - started) / 1000) * perSecond));
      if (due > sent) io.push('in', names.slice(sent, due).map((k) => ({ value: { k }, timestamp: now })));
      io.pushWatermark('in', now - 1);
      sent = due;
      await new Promise((resolve) => setTimeout(resolve, TICK_MS));
    }
    // The last windows close and reach the sink.
    const end = Date.now() + WINDOW_MS;
    while (Date.now() < end + 2_000) {
      io.pushWatermark('in', Date.now() - 1);
      await new Promise((resolve) => setTimeout(resolve, TICK_MS));
    }
    await io.quiet();
    return { p99Ms: latency.getValueAtPercentile(99), maxMs, windows: latency.totalCount };
  } finally {
    latency.destroy();
    await running.stop();
  }
}

function start(n: number, maxParallelism: number, cap: number, windowMs: number, sink: SinkSpec<WindowResult<string, number>>) {
  const job = defineJob({ name: 'skew-engine', maxParallelism }, (b) =>
    b
      .source<{ k: string }>('in', memorySource())
      .keyBy('by-key', (r) => r.k)
      .window(
        'counts',
        tumbling(windowMs),
        aggregate<string, { k: string }, number, number>({ createAccumulator: () => 0, add: (_, a) => a + 1, merge: (a, b) => a + b, getResult: (a) => a }),
        { splittable: true },
      )
      .sink('out', sink),
  );
  return runJob(job, {
    tenantId: 'bench',
    jobId: 'skew-engine',
    parallelism: { default: 1, counts: n, 'counts-merge': n },
    state: () => createStateBackend({ kind: 'memory' }),
    subtaskRecordsPerSecond: cap,
  });
}

async function apply(running: Awaited<ReturnType<typeof runJob>>, layout: PartitionLayout): Promise<void> {
  const table = running.routingTable('counts');
  const moves = layout.owners.map((toSubtask, keyGroup) => ({ keyGroup, toSubtask })).filter((m) => table.ownerOf(m.keyGroup) !== m.toSubtask);
  if (moves.length) await running.moveKeyGroups('counts', moves);
  const firstOwned = (subtask: number) => layout.owners.indexOf(subtask);
  const splits: KeySplit[] = layout.splits.map((s) => ({
    key: s.key,
    keyGroup: s.keyGroup,
    parts: s.subtasks.map((subtask) => (layout.owners[s.keyGroup] === subtask ? s.keyGroup : firstOwned(subtask))),
    weights: [...s.weights],
  }));
  running.splitKeys('counts', splits);
}

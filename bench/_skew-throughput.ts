/**
 * skew's throughput_ratio: the same Zipf stream through the engine's real path (keyBy → a splittable window's partial
 * operator, then its merge) in one process, every keyed subtask capped at `cap` records/s by time (the engine's
 * `subtask.max-records-per-second`: a subtask waits out its share, it does not spin), so that n subtasks stand for n
 * machines on this 2-core one. Static hashing (the default contiguous ranges, nothing split) against Weir's layout
 * (the partitioner's converged decision for that stream: its key-group moves made with moveKeyGroups, its split keys
 * with splitKeys, each other subtask's part in the first key group it owns). Sustainable throughput = records ÷ the
 * time the capped subtasks take to handle them, fed in chunks as fast as they take them (each chunk's time is its
 * most loaded subtask's share ÷ cap). The windows are one hour of event time, so nothing fires while measured.
 */
import { aggregate, defineJob, memoryIoOf, memorySource, memorySink, runJob, tumbling, type KeySplit } from '@weir/engine';
import { createStateBackend } from '@weir/state';
import type { PartitionLayout } from '@weir/partitioner';

export interface ThroughputRun {
  readonly recordsPerSec: number;
  readonly seconds: number;
}

const CHUNK = 20_000;

/** Records/s of the capped job over `names` (one record per entry), routed by `layout` (null: static hashing). */
export async function cappedThroughput(names: readonly string[], n: number, maxParallelism: number, cap: number, layout: PartitionLayout | null): Promise<ThroughputRun> {
  const job = defineJob({ name: 'skew-throughput', maxParallelism }, (b) =>
    b
      .source<{ k: string }>('in', memorySource())
      .keyBy('by-key', (r) => r.k)
      .window(
        'counts',
        tumbling(3_600_000),
        aggregate<string, { k: string }, number, number>({ createAccumulator: () => 0, add: (_, a) => a + 1, merge: (a, b) => a + b, getResult: (a) => a }),
        { splittable: true },
      )
      .sink('out', memorySink()),
  );
  const running = await runJob(job, {
    tenantId: 'bench',
    jobId: 'skew-throughput',
    parallelism: { default: 1, counts: n, 'counts-merge': n },
    state: () => createStateBackend({ kind: 'memory' }),
    subtaskRecordsPerSecond: cap,
  });
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

/**
 * npm run bench -- checkpoint [--sizes 10,100] [--checkpoints 10]
 *
 * Incremental checkpoints of a RocksDB keyed state backend to the real S3 server, through the public API the
 * engine uses (@weir/state's checkpoint(dir) + @weir/checkpoint's CheckpointStore.write). For each state size:
 * fill the state (random 100-byte values, 128 key groups), take one warm-up checkpoint (uploads everything), then
 * N checkpoints while a writer changes 1% of the keys per checkpoint interval (its batches run concurrently with
 * the checkpoint, so they queue behind the local part exactly as the engine's flushes would). Figures per
 * checkpoint: bytes uploaded ÷ state bytes, the local part (cache and memtable flush + hard links of the live
 * files: what blocks state access) and the whole checkpoint (local part + hashing + upload + manifest). Baseline,
 * measured in the same run,
 * alternating with the incremental checkpoints: a full checkpoint of the same state (no base: every file
 * uploaded, what a non-incremental scheme pays). Then the restore of the latest checkpoint (download, verify,
 * open). Ends with one JSON line.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type Histogram } from 'hdr-histogram-js';
import { createBlobStore, type BlobStore } from '@weir/blob';
import { CheckpointStore, type CompletedCheckpoint } from '@weir/checkpoint';
import { loadConfig } from '@weir/config';
import { createStateBackend, openStateBackendFromCheckpoint, type CheckpointableStateBackend, type StateRef } from '@weir/state';
import { measureJob, type JobFigures } from './_checkpoint-job';

const KEY_GROUPS = 128;
const NAMESPACE = 'bench/aggregate';
const VALUE_BYTES = 100;
const BATCH = 1_000;
/** Stored bytes per entry: key (2 + 2 + namespace + 8) + value envelope (1 + msgpack of a 100-byte buffer). */
const ENTRY_BYTES = 2 + 2 + NAMESPACE.length + 8 + 1 + VALUE_BYTES + 2;

function argument(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1];
}

const SIZES_MB = argument('sizes', '10,100').split(',').map(Number);
const CHECKPOINTS = Number(argument('checkpoints', '10'));
const BASELINE_EVERY = 3;
/** The job half (latency per delivery mode, recovery): records per second, or 0 to skip it. */
const JOB_RATE = Number(argument('job-rate', '2000'));
const MB = 1024 * 1024;

function refOf(i: number): StateRef {
  const key = Buffer.allocUnsafe(8);
  key.writeUInt32BE(Math.imul(i, 2654435761) >>> 0, 0);
  key.writeUInt32BE(i, 4);
  return { keyGroup: i % KEY_GROUPS, namespace: NAMESPACE, key };
}

async function writeKeys(backend: CheckpointableStateBackend, indexes: readonly number[]): Promise<void> {
  for (let i = 0; i < indexes.length; i += BATCH) {
    const values = randomBytes(VALUE_BYTES * Math.min(BATCH, indexes.length - i));
    for (let j = i; j < Math.min(i + BATCH, indexes.length); j++) {
      backend.put(refOf(indexes[j]), values.subarray((j - i) * VALUE_BYTES, (j - i + 1) * VALUE_BYTES));
    }
    await backend.flush();
  }
}

function randomIndexes(total: number, count: number): number[] {
  const picked = new Set<number>();
  while (picked.size < count) picked.add(Math.floor(Math.random() * total));
  return [...picked];
}

const histogram = (): Histogram => build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000 });
const round = (x: number, digits = 3): number => Number(x.toFixed(digits));

interface SizeResult {
  readonly state_mb: number;
  readonly keys: number;
  readonly checkpoints: number;
  readonly uploaded_vs_state: number;
  readonly uploaded_vs_state_p50: number;
  readonly uploaded_mb_mean: number;
  readonly local_p50_ms: number;
  readonly local_p99_ms: number;
  /** Local parts that fell back to pausing background work (linking the live files raced compactions). */
  readonly local_paused: number;
  readonly checkpoint_p50_ms: number;
  readonly checkpoint_p99_ms: number;
  readonly checkpoint_max_ms: number;
  readonly full_checkpoint_p50_ms: number;
  readonly incremental_vs_full: number;
  readonly restore_s: number;
  readonly fill_s: number;
}

async function runSize(blob: BlobStore, sizeMb: number, work: string): Promise<SizeResult> {
  const tenantId = `bench-${randomUUID().slice(0, 8)}`;
  const store = new CheckpointStore(blob, { concurrency: 4 });
  const keys = Math.round((sizeMb * MB) / ENTRY_BYTES);
  const changed = Math.max(1, Math.round(keys / 100));
  const backend = await createStateBackend({ kind: 'lsm', path: join(work, `db-${sizeMb}`), cacheEntries: 50_000 });
  let localDirs = 0;
  const localDir = () => join(work, `local-${sizeMb}-${localDirs++}`);
  try {
    const fillStart = performance.now();
    const all = Array.from({ length: keys }, (_, i) => i);
    await writeKeys(backend, all);
    const fillSeconds = (performance.now() - fillStart) / 1000;

    const checkpoint = async (jobId: string, checkpointId: number) => {
      const start = performance.now();
      const dir = localDir();
      const state = await backend.checkpoint(dir);
      const localMs = performance.now() - start;
      const done = await store.write({
        tenantId,
        jobId,
        checkpointId,
        maxParallelism: KEY_GROUPS,
        parts: [{ operatorId: 'agg', subtask: 0, keyGroups: { start: 0, end: KEY_GROUPS - 1 }, state }],
      });
      rmSync(dir, { recursive: true, force: true });
      return { done, localMs, totalMs: performance.now() - start, paused: state.pausedBackgroundWork === true };
    };

    await checkpoint('incremental', 0); // warm-up: uploads everything
    const local = histogram();
    const total = histogram();
    const full = histogram();
    const ratios: number[] = [];
    let paused = 0;
    let uploaded = 0;
    let stateBytes = 0;
    let last: CompletedCheckpoint | undefined;
    for (let id = 1; id <= CHECKPOINTS; id++) {
      // The writer changes 1% of the keys during the checkpoint interval; the checkpoint starts half-way through.
      const changes = randomIndexes(keys, changed);
      const half = Math.floor(changes.length / 2);
      await writeKeys(backend, changes.slice(0, half));
      const [result] = await Promise.all([checkpoint('incremental', id), writeKeys(backend, changes.slice(half))]);
      local.recordValue(Math.max(1, Math.round(result.localMs)));
      if (result.paused) paused++;
      total.recordValue(Math.max(1, Math.round(result.totalMs)));
      const stats = result.done.manifest.stats;
      ratios.push(stats.uploadedBytes / stats.stateBytes);
      uploaded += stats.uploadedBytes;
      stateBytes += stats.stateBytes;
      last = result.done;
      if (id % BASELINE_EVERY === 1) {
        // Baseline: the same state as a full checkpoint (a job with no earlier checkpoint uploads every file).
        const baseline = await checkpoint(`full-${id}`, id);
        full.recordValue(Math.max(1, Math.round(baseline.totalMs)));
      }
    }

    const restoreStart = performance.now();
    const restoreDir = localDir();
    const { checkpoint: downloaded } = await store.restoreLatestUsable({ tenantId, jobId: 'incremental' }, [{ operatorId: 'agg' }], restoreDir);
    const restored = await openStateBackendFromCheckpoint({ checkpoint: downloaded.parts[0].state!, path: join(work, `restored-${sizeMb}`) });
    const restoreSeconds = (performance.now() - restoreStart) / 1000;
    await restored.close();
    rmSync(restoreDir, { recursive: true, force: true });

    const sorted = [...ratios].sort((a, b) => a - b);
    const checkpointP50 = total.getValueAtPercentile(50);
    const fullP50 = full.getValueAtPercentile(50);
    return {
      state_mb: round(last!.manifest.stats.stateBytes / MB, 1),
      keys,
      checkpoints: CHECKPOINTS,
      uploaded_vs_state: round(uploaded / stateBytes, 4),
      uploaded_vs_state_p50: round(sorted[Math.floor(sorted.length / 2)], 4),
      uploaded_mb_mean: round(uploaded / CHECKPOINTS / MB, 2),
      local_p50_ms: local.getValueAtPercentile(50),
      local_p99_ms: local.getValueAtPercentile(99),
      local_paused: paused,
      checkpoint_p50_ms: checkpointP50,
      checkpoint_p99_ms: total.getValueAtPercentile(99),
      checkpoint_max_ms: total.maxValue,
      full_checkpoint_p50_ms: fullP50,
      incremental_vs_full: round(checkpointP50 / fullP50, 3),
      restore_s: round(restoreSeconds, 2),
      fill_s: round(fillSeconds, 1),
    };
  } finally {
    await backend.close();
    const objects: string[] = [];
    for await (const info of blob.list(`tenants/${tenantId}/`)) objects.push(info.key);
    for (const key of objects) await blob.delete(key);
  }
}

async function main(): Promise<void> {
  const blob = createBlobStore(loadConfig(process.env));
  await blob.ensureBucket();
  const work = mkdtempSync(join(tmpdir(), 'weir-bench-checkpoint-'));
  // rocksdb-native's close does not hold the event loop open; this keeps the process alive until main ends.
  const keepAlive = setInterval(() => undefined, 1_000);
  const results: SizeResult[] = [];
  try {
    for (const sizeMb of SIZES_MB) {
      const started = performance.now();
      results.push(await runSize(blob, sizeMb, work));
      console.error(`${sizeMb} MB done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
    blob.close();
  }
  let job: JobFigures | null = null;
  let jobError: string | null = null;
  if (JOB_RATE > 0) {
    try {
      const started = performance.now();
      job = await measureJob({ rate: JOB_RATE, warmupS: 5, measureS: 15 });
      console.error(`job half done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    } catch (err) {
      jobError = (err as Error).message;
      console.error('job half failed:', err);
    }
  }
  clearInterval(keepAlive);

  console.log(`\nIncremental checkpoints, RocksDB state → S3 (s3rver on loopback), 1% of keys changed per checkpoint, ${CHECKPOINTS} checkpoints per size (1 run)`);
  console.table(
    results.map((r) => ({
      'state MB': r.state_mb,
      keys: r.keys,
      'uploaded/ckpt MB': r.uploaded_mb_mean,
      'uploaded ÷ state (mean)': r.uploaded_vs_state,
      'uploaded ÷ state (p50)': r.uploaded_vs_state_p50,
      'local p50/p99 ms': `${r.local_p50_ms} / ${r.local_p99_ms}`,
      'local paused': r.local_paused,
      'checkpoint p50/p99/max ms': `${r.checkpoint_p50_ms} / ${r.checkpoint_p99_ms} / ${r.checkpoint_max_ms}`,
      'full checkpoint p50 ms': r.full_checkpoint_p50_ms,
      'incremental ÷ full': r.incremental_vs_full,
      'restore s': r.restore_s,
    })),
  );
  if (job) {
    console.log(`\nJob host with checkpoints every ${job.checkpoint_interval_ms} ms, ${job.rate} records/s fixed schedule, keyed running totals, Kafka → Kafka (1 run)`);
    console.table([
      { mode: 'at-least-once', 'p50 ms': job.alo_p50_ms, 'p99 ms': job.alo_p99_ms },
      { mode: 'exactly-once (read_committed)', 'p50 ms': job.eos_p50_ms, 'p99 ms': job.eos_p99_ms },
    ]);
    console.log(`recovery (SIGKILL → first committed result past those before it, immediate restart): ${job.recovery_s} s`);
  }
  const largest = results[results.length - 1];
  console.log(
    JSON.stringify({
      bench: 'checkpoint',
      state_mb: largest.state_mb,
      changed_pct: 1,
      uploaded_vs_state: largest.uploaded_vs_state,
      checkpoint_p50_ms: largest.checkpoint_p50_ms,
      checkpoint_p99_ms: largest.checkpoint_p99_ms,
      recovery_s: job?.recovery_s ?? null,
      eos_p99_ms: job?.eos_p99_ms ?? null,
      alo_p99_ms: job?.alo_p99_ms ?? null,
      note:
        'checkpoint durations measured on the backend with a writer changing 1% of keys concurrently, not inside a ' +
        `job at 70% load; latencies and recovery from a job host at a fixed ${JOB_RATE} records/s (not calibrated ` +
        'to 70% of capacity), recovery with an immediate restart (no failure detection)' +
        (jobError ? `; the job half failed: ${jobError}` : ''),
      job,
      uploaded_vs_state_p50: largest.uploaded_vs_state_p50,
      local_p99_ms: largest.local_p99_ms,
      incremental_vs_full: largest.incremental_vs_full,
      restore_s: largest.restore_s,
      sizes: results,
    }),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

/**
 * npm run bench -- checkpoint [--sizes 10,100] [--checkpoints 10] [--job-load 0.7 | --job-rate N | --job-rate 0]
 *
 * Incremental checkpoints of a RocksDB keyed state backend to the real S3 server, two designs side by side on the
 * same state in the same run, through the code the job host runs:
 * - changelog (what the job host uses): backend.checkpointKeyGroups (per key group, the changes since the
 *   previous checkpoint; a full image on the key group's turn) → KeyGroupChains + snapshot codec (one packed
 *   changes blob per subtask, unchanged links reused by reference) → CheckpointStore.write;
 * - SST files: backend.checkpoint(dir) (hard links of RocksDB's live files) → CheckpointStore.write (new files only).
 * For each state size: fill the state (random 100-byte values, 128 key groups), take one warm-up checkpoint of
 * each design (uploads everything: the "full" baseline), then N rounds; in each, a writer changes 1% of the keys,
 * half before and half during the checkpoints (its batches queue behind their local parts exactly as the engine's
 * flushes would); the two designs take turns going first. Per checkpoint: bytes uploaded ÷ state bytes (the
 * state is the RocksDB live files, the same denominator for both), the local part (what blocks state access) and
 * the whole checkpoint. Then the restore of each design's latest checkpoint (download, verify, rebuild a backend).
 * Ends with one JSON line; its top-level figures are the changelog design's at the largest size.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type Histogram } from 'hdr-histogram-js';
import { createBlobStore, type BlobStore } from '@weir/blob';
import { CheckpointStore, type CompletedCheckpoint } from '@weir/checkpoint';
import { loadConfig } from '@weir/config';
import {
  createStateBackend,
  DEFAULT_MATERIALIZE_EVERY,
  openStateBackendFromCheckpoint,
  type CheckpointableStateBackend,
  type StateRef,
} from '@weir/state';
import { KeyGroupChains } from '../apps/worker/src/checkpoints/key-group-chains';
import { fromDownloaded, toCheckpointParts } from '../apps/worker/src/checkpoints/snapshot-codec';
import { measureJob, type JobFigures } from './_checkpoint-job';
import { argument } from './_arguments';

const KEY_GROUPS = 128;
const ALL_KEY_GROUPS = Array.from({ length: KEY_GROUPS }, (_, kg) => kg);
const NAMESPACE = 'bench/aggregate';
const VALUE_BYTES = 100;
const BATCH = 1_000;
/** Stored bytes per entry: key (2 + 2 + namespace + 8) + value envelope (1 + msgpack of a 100-byte buffer). */
const ENTRY_BYTES = 2 + 2 + NAMESPACE.length + 8 + 1 + VALUE_BYTES + 2;

const SIZES_MB = argument('sizes', '10,100').split(',').map(Number);
const CHECKPOINTS = Number(argument('checkpoints', '10'));
/** The job half (latency per delivery mode, recovery): records per second, or 0 to skip it. */
/** `--job-rate N` drives the job half at N records/s, `--job-load F` at F × its measured capacity (default 0.7), 0 skips it. */
const JOB_RATE = Number(argument('job-rate', '-1'));
const JOB_LOAD = Number(argument('job-load', '0.7'));
const MB = 1024 * 1024;

function refOf(i: number): StateRef {
  const key = Buffer.allocUnsafe(8);
  key.writeUInt32BE(Math.imul(i, 2654435761) >>> 0, 0);
  key.writeUInt32BE(i, 4);
  return { keyGroup: i % KEY_GROUPS, namespace: NAMESPACE, key };
}

/**
 * Writes as the engine does: each batch prefetches the keys it touches first. That also starts a cache batch, and
 * only entries of earlier batches can be evicted: writing without it kept every key in the write-back cache (a
 * heap of GBs at 1 GB of state, whose GC dominated the earlier 1 GB figures).
 */
async function writeKeys(backend: CheckpointableStateBackend, indexes: readonly number[]): Promise<void> {
  for (let i = 0; i < indexes.length; i += BATCH) {
    const values = randomBytes(VALUE_BYTES * Math.min(BATCH, indexes.length - i));
    const refs = indexes.slice(i, i + BATCH).map(refOf);
    await backend.prefetch(refs);
    for (let j = 0; j < refs.length; j++) backend.put(refs[j], values.subarray(j * VALUE_BYTES, (j + 1) * VALUE_BYTES));
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
const cpuMs = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

type Design = 'changelog' | 'sst';

interface DesignResult {
  readonly uploaded_vs_state: number;
  readonly uploaded_vs_state_p50: number;
  readonly uploaded_vs_state_max: number;
  readonly uploaded_mb_mean: number;
  readonly local_p50_ms: number;
  readonly local_p99_ms: number;
  readonly checkpoint_p50_ms: number;
  readonly checkpoint_p99_ms: number;
  readonly checkpoint_max_ms: number;
  /** The warm-up checkpoint: everything uploaded. */
  readonly full_checkpoint_ms: number;
  /** The warm-up checkpoint's local part (what holds the subtask at its barrier when every key group is imaged). */
  readonly full_local_ms: number;
  readonly full_checkpoint_cpu_s: number;
  readonly incremental_vs_full: number;
  /** Download, verify, compose (changelog) and write back / open (SST files) the latest checkpoint. */
  readonly restore_s: number;
  readonly restore_cpu_s: number;
  /** Changelog: the local part of the restored backend's first checkpoint (every key group a full image). */
  readonly first_after_restore_local_ms: number | null;
}

interface SizeResult {
  readonly state_mb: number;
  readonly keys: number;
  readonly checkpoints: number;
  readonly fill_s: number;
  /** SST design: local parts that fell back to pausing background work (linking the live files raced compactions). */
  readonly sst_local_paused: number;
  readonly changelog: DesignResult;
  readonly sst: DesignResult;
}

interface Taken {
  readonly done: CompletedCheckpoint;
  readonly localMs: number;
  readonly totalMs: number;
  /** CPU time of this process (engine thread and RocksDB's threads), which the machine's load does not inflate. */
  readonly cpuMs: number;
  readonly paused: boolean;
}

async function runSize(blob: BlobStore, sizeMb: number, work: string): Promise<SizeResult> {
  const tenantId = `bench-${randomUUID().slice(0, 8)}`;
  const store = new CheckpointStore(blob, { concurrency: 4 });
  const keys = Math.round((sizeMb * MB) / ENTRY_BYTES);
  const changed = Math.max(1, Math.round(keys / 100));
  const backend = await createStateBackend({ kind: 'lsm', path: join(work, `db-${sizeMb}`), cacheEntries: 50_000, changelog: true });
  const chains = new KeyGroupChains();
  let localDirs = 0;
  const localDir = () => join(work, `local-${sizeMb}-${localDirs++}`);
  const job = (design: Design) => ({ tenantId, jobId: design });
  try {
    const fillStart = performance.now();
    await writeKeys(backend, Array.from({ length: keys }, (_, i) => i));
    const fillSeconds = (performance.now() - fillStart) / 1000;

    const checkpoint = async (design: Design, checkpointId: number): Promise<Taken> => {
      const start = performance.now();
      const startCpu = cpuMs();
      if (design === 'sst') {
        const dir = localDir();
        const state = await backend.checkpoint(dir);
        const localMs = performance.now() - start;
        const done = await store.write({
          ...job(design),
          checkpointId,
          maxParallelism: KEY_GROUPS,
          parts: [{ operatorId: 'agg', subtask: 0, keyGroups: { start: 0, end: KEY_GROUPS - 1 }, state }],
        });
        rmSync(dir, { recursive: true, force: true });
        return { done, localMs, totalMs: performance.now() - start, cpuMs: cpuMs() - startCpu, paused: state.pausedBackgroundWork === true };
      }
      // What the keyed operator does at its barrier, then what the job host's checkpointer does with the cut.
      const images = await backend.checkpointKeyGroups(ALL_KEY_GROUPS);
      const localMs = performance.now() - start;
      const parts = toCheckpointParts({ checkpointId, subtasks: [{ stageId: 'agg', subtask: 0, keyGroups: images }] }, () => ALL_KEY_GROUPS, chains);
      const done = await store.write({ ...job(design), checkpointId, maxParallelism: KEY_GROUPS, parts });
      chains.completed(done.manifest);
      return { done, localMs, totalMs: performance.now() - start, cpuMs: cpuMs() - startCpu, paused: false };
    };

    const full = { changelog: await checkpoint('changelog', 0), sst: await checkpoint('sst', 0) };
    const figures = {
      changelog: { local: histogram(), total: histogram(), ratios: [] as number[], uploaded: 0 },
      sst: { local: histogram(), total: histogram(), ratios: [] as number[], uploaded: 0 },
    };
    let stateBytes = 0;
    let paused = 0;
    for (let id = 1; id <= CHECKPOINTS; id++) {
      const changes = randomIndexes(keys, changed);
      const half = Math.floor(changes.length / 2);
      await writeKeys(backend, changes.slice(0, half));
      const order: Design[] = id % 2 === 0 ? ['changelog', 'sst'] : ['sst', 'changelog'];
      const taken = new Map<Design, Taken>();
      const writer = writeKeys(backend, changes.slice(half));
      for (const design of order) taken.set(design, await checkpoint(design, id));
      await writer;
      // Both designs' uploads over the same state: the RocksDB live files of this round's SST checkpoint.
      const state = taken.get('sst')!.done.manifest.stats.stateBytes;
      stateBytes += state;
      for (const design of order) {
        const t = taken.get(design)!;
        const f = figures[design];
        f.local.recordValue(Math.max(1, Math.round(t.localMs)));
        f.total.recordValue(Math.max(1, Math.round(t.totalMs)));
        f.ratios.push(t.done.manifest.stats.uploadedBytes / state);
        f.uploaded += t.done.manifest.stats.uploadedBytes;
        if (t.paused) paused++;
      }
    }

    /**
     * Restores the design's latest checkpoint into a new backend. For the changelog, the restored backend then takes
     * its first checkpoint's local part as a job restored from a savepoint or at another parallelism would (full
     * images of every key group: the restored images merged with the writes since, none here).
     */
    const restore = async (design: Design): Promise<{ seconds: number; cpuSeconds: number; firstLocalMs: number | null }> => {
      const start = performance.now();
      const startCpu = cpuMs();
      const dir = localDir();
      const { checkpoint: downloaded } = await store.restoreLatestUsable(job(design), [{ operatorId: 'agg' }], dir);
      const path = join(work, `restored-${sizeMb}-${design}`);
      let restored: CheckpointableStateBackend;
      if (design === 'sst') {
        restored = await openStateBackendFromCheckpoint({ checkpoint: downloaded.parts[0].state!, path });
      } else {
        restored = await createStateBackend({ kind: 'lsm', path, changelog: true });
        const images = fromDownloaded(downloaded).snapshot.subtasks[0].keyGroups!;
        for (const [kg, image] of images) await restored.restoreKeyGroup(kg, image);
      }
      const seconds = (performance.now() - start) / 1000;
      const cpuSeconds = (cpuMs() - startCpu) / 1000;
      let firstLocalMs: number | null = null;
      if (design === 'changelog') {
        const firstStart = performance.now();
        await restored.checkpointKeyGroups!(ALL_KEY_GROUPS);
        firstLocalMs = Math.round(performance.now() - firstStart);
      }
      await restored.close();
      rmSync(dir, { recursive: true, force: true });
      return { seconds, cpuSeconds, firstLocalMs };
    };

    const result = async (design: Design): Promise<DesignResult> => {
      const f = figures[design];
      const sorted = [...f.ratios].sort((a, b) => a - b);
      const p50 = f.total.getValueAtPercentile(50);
      const fullMs = Math.round(full[design].totalMs);
      const restored = await restore(design);
      return {
        uploaded_vs_state: round(f.uploaded / stateBytes, 4),
        uploaded_vs_state_p50: round(sorted[Math.floor(sorted.length / 2)], 4),
        uploaded_vs_state_max: round(sorted[sorted.length - 1], 4),
        uploaded_mb_mean: round(f.uploaded / CHECKPOINTS / MB, 2),
        local_p50_ms: f.local.getValueAtPercentile(50),
        local_p99_ms: f.local.getValueAtPercentile(99),
        checkpoint_p50_ms: p50,
        checkpoint_p99_ms: f.total.getValueAtPercentile(99),
        checkpoint_max_ms: f.total.maxValue,
        full_checkpoint_ms: fullMs,
        full_local_ms: Math.round(full[design].localMs),
        full_checkpoint_cpu_s: round(full[design].cpuMs / 1000, 1),
        incremental_vs_full: round(p50 / fullMs, 3),
        restore_s: round(restored.seconds, 2),
        restore_cpu_s: round(restored.cpuSeconds, 1),
        first_after_restore_local_ms: restored.firstLocalMs,
      };
    };
    return {
      state_mb: round(stateBytes / CHECKPOINTS / MB, 1),
      keys,
      checkpoints: CHECKPOINTS,
      fill_s: round(fillSeconds, 1),
      sst_local_paused: paused,
      changelog: await result('changelog'),
      sst: await result('sst'),
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
  if (JOB_RATE !== 0 && JOB_LOAD > 0) {
    try {
      const started = performance.now();
      job = await measureJob(JOB_RATE > 0 ? { rate: JOB_RATE } : { load: JOB_LOAD }, { warmupS: 5, measureS: 15 });
      console.error(`job half done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    } catch (err) {
      jobError = (err as Error).message;
      console.error('job half failed:', err);
    }
  }
  clearInterval(keepAlive);

  console.log(
    `\nIncremental checkpoints, RocksDB state → S3 (s3rver on loopback), 1% of keys changed per checkpoint, ${CHECKPOINTS} ` +
      `checkpoints per size and design, the designs taking turns on the same state (1 run); changelog materialises each ` +
      `key group every ${DEFAULT_MATERIALIZE_EVERY} checkpoints`,
  );
  console.table(
    results.flatMap((r) =>
      (['changelog', 'sst'] as const).map((design) => {
        const d = r[design];
        return {
          'state MB': r.state_mb,
          design,
          'uploaded/ckpt MB': d.uploaded_mb_mean,
          'uploaded ÷ state mean / p50 / max': `${d.uploaded_vs_state} / ${d.uploaded_vs_state_p50} / ${d.uploaded_vs_state_max}`,
          'local p50/p99 ms': `${d.local_p50_ms} / ${d.local_p99_ms}`,
          'checkpoint p50/p99/max ms': `${d.checkpoint_p50_ms} / ${d.checkpoint_p99_ms} / ${d.checkpoint_max_ms}`,
          'full checkpoint (local) ms, cpu s': `${d.full_checkpoint_ms} (${d.full_local_ms}), ${d.full_checkpoint_cpu_s}`,
          'incremental ÷ full': d.incremental_vs_full,
          'restore s (cpu s)': `${d.restore_s} (${d.restore_cpu_s})`,
          'next local ms': d.first_after_restore_local_ms ?? '-',
        };
      }),
    ),
  );
  if (job) {
    console.log(`\nJob host with checkpoints every ${job.checkpoint_interval_ms} ms, ${job.rate} records/s fixed schedule${job.capacity_rps ? ` (${job.load_pct}% of its capacity on a backlog, ${job.capacity_rps} records/s)` : ''}, keyed running totals, Kafka → Kafka (1 run)`);
    console.table([
      { mode: 'at-least-once', 'p50 ms': job.alo_p50_ms, 'p99 ms': job.alo_p99_ms },
      { mode: 'exactly-once (read_committed)', 'p50 ms': job.eos_p50_ms, 'p99 ms': job.eos_p99_ms },
    ]);
    console.log(`recovery (SIGKILL → first committed result past those before it, immediate restart): ${job.recovery_s} s`);
    console.log(`checkpoints inside the exactly-once job host (sampled, ${job.job_checkpoints}): p50 ${job.job_checkpoint_p50_ms} ms, p99 ${job.job_checkpoint_p99_ms} ms`);
  }
  const largest = results[results.length - 1];
  console.log(
    JSON.stringify({
      bench: 'checkpoint',
      state_mb: largest.state_mb,
      changed_pct: 1,
      uploaded_vs_state: largest.changelog.uploaded_vs_state,
      checkpoint_p50_ms: largest.changelog.checkpoint_p50_ms,
      checkpoint_p99_ms: largest.changelog.checkpoint_p99_ms,
      recovery_s: job?.recovery_s ?? null,
      eos_p99_ms: job?.eos_p99_ms ?? null,
      alo_p99_ms: job?.alo_p99_ms ?? null,
      note:
        'top-level upload and checkpoint figures: the changelog design the job host runs, measured on the backend with a ' +
        'writer changing 1% of keys concurrently; sst = the SST-file design on the same state in the same run; ' +
        `latencies, recovery and job_checkpoint_* from a job host driven at a fixed ${job?.rate ?? '?'} records/s ` +
        (job?.capacity_rps ? `(${job.load_pct}% of the ${job.capacity_rps} records/s it sustained on a backlog)` : '(a rate given with --job-rate)') +
        ', recovery with an immediate restart (no failure detection)' +
        (jobError ? `; the job half failed: ${jobError}` : ''),
      job,
      sst_uploaded_vs_state: largest.sst.uploaded_vs_state,
      sst_checkpoint_p99_ms: largest.sst.checkpoint_p99_ms,
      restore_s: largest.changelog.restore_s,
      full_checkpoint_s: round(largest.changelog.full_checkpoint_ms / 1000, 1),
      sst_restore_s: largest.sst.restore_s,
      sst_full_checkpoint_s: round(largest.sst.full_checkpoint_ms / 1000, 1),
      sizes: results,
    }),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

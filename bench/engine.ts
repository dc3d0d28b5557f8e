/**
 * npm run bench -- engine [--records N] [--keys K] [--kafka-records M] [--runs R] [--warmup W]
 *
 * 1. engine_vs_loop: a keyed tumbling-window count + sum over K (1M) keys drawn Zipf(1.0), N records, in one
 *    process: the engine (generator source → keyBy → window, LSM state) vs a hand-written loop with plain Maps over
 *    the same pre-generated input, alternating, W uncounted warm-up runs (default 1) then R runs each; ratio of medians
 *    (records/s).
 * 2. engine_vs_passthrough, records_per_s (sustained, from fixed-rate probes), p50_ms / p99_ms (at 80% of it): the
 *    Kafka pipeline, in bench/_engine-kafka.ts.
 * Ends with one JSON line. Bounded to a few minutes. `--part loop` runs (1) alone, `--part kafka` (2) alone (for CPU
 * profiles and A/B comparisons). `--profile-engine FILE` writes a CPU profile of the engine side of the last
 * engine_vs_passthrough run alone (not the passthrough, not the producer) to FILE.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStateBackend } from '@weir/state';
import { aggregate, callbackSink, defineJob, generatorSource, runJob, tumbling, type JobDefinition, type SinkResult } from '@weir/engine';
import { kafkaPipeline } from './_engine-kafka';
import { printJsonLine, printTable, ratio } from './_latency';
import { numberArgument as argument } from './_arguments';

const RECORDS = argument('records', 1_000_000);
const KEYS = argument('keys', 1_000_000);
const KAFKA_RECORDS = argument('kafka-records', 200_000);
const RUNS = argument('runs', 2);
/** Uncounted runs of each side first (JIT, caches, connections): the benchmark rules' "warm up before it counts". */
const WARMUP = argument('warmup', 1);
/** Subtasks per stage of the Kafka pipeline. One process is one event loop: more subtasks add no CPU here. */
const PIPELINE_PARALLELISM = argument('parallelism', 1);
const WINDOW_MS = 1_000;
/** Event time advances 1 ms every 100 records: 100k records per window, 10 windows per million. */
const RECORDS_PER_MS = 100;

interface Event {
  readonly key: string;
  readonly v: number;
  readonly ts: number;
}

/** Zipf(s) over n ranks by inverse CDF on a precomputed table, seeded. */
function zipfSampler(n: number, s: number, seed: number): () => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) cdf[i] = sum += 1 / Math.pow(i + 1, s);
  for (let i = 0; i < n; i++) cdf[i] /= sum;
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => {
    const u = random();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

function makeInput(count: number): Event[] {
  const next = zipfSampler(KEYS, 1.0, 42);
  return Array.from({ length: count }, (_, i) => ({ key: `user-${next()}`, v: i % 100, ts: Math.floor(i / RECORDS_PER_MS) }));
}

interface Totals {
  count: number;
  sum: number;
}

/** An in-place accumulator (the SDK's opt-in; see AggregateFunction), as the hand loop updates its Map values. */
const totals = aggregate<string, Event, Totals, Totals>({
  createAccumulator: () => ({ count: 0, sum: 0 }),
  add: (e, a) => {
    a.count++;
    a.sum += e.v;
    return a;
  },
  // Safe to return the accumulator itself: without allowed lateness a window fires once and is dropped.
  getResult: (a) => a,
});

/** The same computation as the window job, by hand: one Map per open window, emitted when event time passes it. */
function handLoop(input: readonly Event[]): { results: number; checksum: number } {
  let windowStart = 0;
  let open = new Map<string, Totals>();
  let results = 0;
  let checksum = 0;
  const emit = () => {
    for (const t of open.values()) {
      results++;
      checksum += t.count;
    }
    open = new Map();
  };
  for (const e of input) {
    const start = e.ts - (e.ts % WINDOW_MS);
    if (start !== windowStart) {
      emit();
      windowStart = start;
    }
    const t = open.get(e.key);
    if (t) {
      t.count++;
      t.sum += e.v;
    } else open.set(e.key, { count: 1, sum: e.v });
  }
  emit();
  return { results, checksum };
}

/** What each side folds its results into: the loop's `emit`, and the engine's sink. */
interface Checksum {
  results: number;
  checksum: number;
}

/**
 * The engine's results go to a sink that folds them as they arrive, like the loop's `emit`: a memorySink would keep
 * all of them (374k) alive to the end of the run, a cost the loop does not pay (it was 40% of the engine's time).
 */
function windowJob(input: readonly Event[], into: Checksum): JobDefinition {
  return defineJob({ name: 'bench-window', maxParallelism: 128 }, (b) =>
    b
      .source<Event>(
        'events',
        generatorSource({
          seed: 1,
          count: input.length,
          generate: (i) => input[i],
          timestamps: (e) => e.ts,
          watermarks: { maxOutOfOrdernessMs: 0 },
        }),
      )
      .keyBy('by-key', (e) => e.key)
      .window('totals', tumbling(WINDOW_MS), totals)
      .sink(
        'out',
        callbackSink((batch: readonly SinkResult<{ result: Totals }>[]) => {
          into.results += batch.length;
          for (const r of batch) into.checksum += r.value.result.count;
        }),
      ),
  );
}

async function engineWindowRun(input: readonly Event[], dir: string): Promise<{ rps: number; results: number; checksum: number }> {
  const folded: Checksum = { results: 0, checksum: 0 };
  const started = performance.now();
  const job = await runJob(windowJob(input, folded), {
    tenantId: 'bench',
    jobId: 'bench-window',
    state: (ctx) =>
      process.env.WEIR_BENCH_STATE === 'memory'
        ? createStateBackend({ kind: 'memory' })
        : createStateBackend({ kind: 'lsm', path: join(dir, `${ctx.operatorId}-${ctx.subtask}`), cacheEntries: 1_000_000 }),
  });
  await job.done;
  const elapsed = performance.now() - started;
  return { rps: (input.length / elapsed) * 1000, ...folded };
}

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function engineVsLoop(): Promise<number> {
  const input = makeInput(RECORDS);
  const engine: number[] = [];
  const loop: number[] = [];
  const rows = [];
  for (let run = -WARMUP; run < RUNS; run++) {
    const t0 = performance.now();
    const loopCpu0 = process.cpuUsage();
    const reference = handLoop(input);
    const loopRps = (input.length / (performance.now() - t0)) * 1000;
    const loopCpuMs = cpuMsSince(loopCpu0);
    const dir = await mkdtemp(join(tmpdir(), 'weir-bench-engine-'));
    try {
      const engineCpu0 = process.cpuUsage();
      const result = await engineWindowRun(input, dir);
      const engineCpuMs = cpuMsSince(engineCpu0);
      if (result.results !== reference.results || result.checksum !== reference.checksum) {
        throw new Error(`engine and loop disagree: ${result.results}/${result.checksum} vs ${reference.results}/${reference.checksum}`);
      }
      if (run >= 0) {
        engine.push(result.rps);
        loop.push(loopRps);
      }
      rows.push({
        run: run >= 0 ? String(run + 1) : 'warm-up',
        loop_rps: Math.round(loopRps),
        engine_rps: Math.round(result.rps),
        ratio: result.rps / loopRps,
        // CPU time of this process over each side: on a shared machine it moves less than wall time does.
        loop_cpu_ms: Math.round(loopCpuMs),
        engine_cpu_ms: Math.round(engineCpuMs),
        cpu_ratio: loopCpuMs / engineCpuMs,
        windows: reference.results,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  printTable(rows, `engine_vs_loop: tumbling ${WINDOW_MS} ms count+sum, ${RECORDS} records, ${KEYS} keys Zipf(1.0), LSM state`);
  return ratio(median(engine), median(loop));
}

async function main(): Promise<void> {
  const benchStart = performance.now();
  const part = process.argv.includes('--part') ? process.argv[process.argv.indexOf('--part') + 1] : 'all';
  const r1 = part === 'kafka' ? null : await engineVsLoop();
  if (part === 'loop') {
    printJsonLine({ bench: 'engine', engine_vs_loop: r1 });
    return;
  }
  const kafka = await kafkaPipeline({
    keys: KEYS,
    records: KAFKA_RECORDS,
    runs: RUNS,
    warmup: WARMUP,
    parallelism: PIPELINE_PARALLELISM,
    latency: part !== 'kafka',
    profileEngine: process.argv.includes('--profile-engine') ? process.argv[process.argv.indexOf('--profile-engine') + 1] : undefined,
  });
  if (part === 'kafka') {
    printJsonLine({ bench: 'engine', engine_vs_passthrough: kafka.engineVsPassthrough, records_per_s: Math.round(kafka.drainRps) });
    return;
  }
  printTable([{ runs: RUNS, total_s: (performance.now() - benchStart) / 1000 }]);
  printJsonLine({
    bench: 'engine',
    engine_vs_loop: r1,
    engine_vs_passthrough: kafka.engineVsPassthrough,
    records_per_s: Math.round(kafka.sustainedRps ?? kafka.drainRps),
    p50_ms: kafka.latency?.p50,
    p99_ms: kafka.latency?.p99,
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

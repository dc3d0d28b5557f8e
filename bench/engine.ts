/**
 * npm run bench -- engine [--records N] [--keys K] [--kafka-records M] [--runs R]
 *
 * 1. engine_vs_loop: a keyed tumbling-window count + sum over K (1M) keys drawn Zipf(1.0), N records, in one
 *    process: the engine (generator source → keyBy → window, LSM state) vs a hand-written loop with plain Maps over
 *    the same pre-generated input, alternating, R runs each; ratio of medians (records/s).
 * 2. engine_vs_passthrough: Kafka → engine keyed aggregation (running count + sum per key, LSM state) → Kafka vs
 *    raw kafkajs consume → produce (bench/_kafka-baseline.ts) of the same M records, same broker, same run.
 * 3. records_per_s: the engine Kafka pipeline's throughput from (2); then a fixed-rate producer offers 80% of it
 *    for a bounded time, each event stamped with its scheduled time, and the event-time latency (scheduled time →
 *    the result read back from the output topic) goes into an HDR histogram: p50 / p99.
 * Ends with one JSON line. Bounded to a few minutes. `--part loop` runs (1) alone, `--part kafka` (2) alone (for CPU
 * profiles and A/B comparisons).
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createKafkaConnector, type KafkaConnector, type ProducedRecord } from '@weir/kafka';
import { createStateBackend } from '@weir/state';
import {
  aggregate,
  defineJob,
  generatorSource,
  json,
  kafkaSink,
  kafkaSource,
  memorySink,
  runJob,
  tumbling,
  valueState,
  type JobDefinition,
} from '@weir/engine';
import { passthrough } from './_kafka-baseline';
import { LatencyRecorder, type LatencySummary, latencyColumns, nowMs, printJsonLine, printTable, ratio, runFixedRate } from './_latency';

function argument(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

const RECORDS = argument('records', 1_000_000);
const KEYS = argument('keys', 1_000_000);
const KAFKA_RECORDS = argument('kafka-records', 200_000);
const RUNS = argument('runs', 2);
const PARTITIONS = 4;
/** Subtasks per stage of the Kafka pipeline. One process is one event loop: more subtasks add no CPU here. */
const PIPELINE_PARALLELISM = argument('parallelism', 1);
const WINDOW_MS = 1_000;
/** Event time advances 1 ms every 100 records: 100k records per window, 10 windows per million. */
const RECORDS_PER_MS = 100;
const BROKERS = (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');

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

const totals = aggregate<string, Event, Totals, Totals>({
  createAccumulator: () => ({ count: 0, sum: 0 }),
  add: (e, a) => ({ count: a.count + 1, sum: a.sum + e.v }),
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

function windowJob(input: readonly Event[]): JobDefinition {
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
      .sink('out', memorySink()),
  );
}

async function engineWindowRun(input: readonly Event[], dir: string): Promise<{ rps: number; results: number; checksum: number }> {
  const started = performance.now();
  const job = await runJob(windowJob(input), {
    tenantId: 'bench',
    jobId: 'bench-window',
    state: (ctx) =>
      process.env.WEIR_BENCH_STATE === 'memory'
        ? createStateBackend({ kind: 'memory' })
        : createStateBackend({ kind: 'lsm', path: join(dir, `${ctx.operatorId}-${ctx.subtask}`), cacheEntries: 1_000_000 }),
  });
  await job.done;
  const elapsed = performance.now() - started;
  const out = job.collected('out') as readonly { value: unknown }[];
  return { rps: (input.length / elapsed) * 1000, results: out.length, checksum: out.reduce((s, r) => s + (r.value as { result: Totals }).result.count, 0) };
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
  for (let run = 0; run < RUNS; run++) {
    const t0 = performance.now();
    const reference = handLoop(input);
    const loopRps = (input.length / (performance.now() - t0)) * 1000;
    const dir = await mkdtemp(join(tmpdir(), 'weir-bench-engine-'));
    try {
      const result = await engineWindowRun(input, dir);
      if (result.results !== reference.results || result.checksum !== reference.checksum) {
        throw new Error(`engine and loop disagree: ${result.results}/${result.checksum} vs ${reference.results}/${reference.checksum}`);
      }
      engine.push(result.rps);
      loop.push(loopRps);
      rows.push({ run: run + 1, loop_rps: Math.round(loopRps), engine_rps: Math.round(result.rps), ratio: result.rps / loopRps, windows: reference.results });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  printTable(rows, `engine_vs_loop: tumbling ${WINDOW_MS} ms count+sum, ${RECORDS} records, ${KEYS} keys Zipf(1.0), LSM state`);
  return ratio(median(engine), median(loop));
}

interface Tx {
  readonly key: string;
  readonly v: number;
  readonly ts: number;
  readonly seq: number;
}

interface RunningTotal {
  readonly key: string;
  readonly count: number;
  readonly sum: number;
  readonly ts: number;
  readonly seq: number;
}

const total = valueState<{ count: number; sum: number }>('total');

/** Kafka → keyBy → running count + sum per key (LSM state) → Kafka: one result per input record. */
function kafkaJob(input: string, output: string): JobDefinition {
  return defineJob({ name: 'bench-kafka', maxParallelism: 128 }, (b) =>
    b
      .source<Tx>('tx', kafkaSource({ topic: input, format: json<Tx>(), timestamps: (t) => t.ts }))
      .keyBy('by-key', (t) => t.key)
      .process<RunningTotal>('totals', {
        states: [total],
        processElement(t, ctx, out) {
          const prev = ctx.state(total).value() ?? { count: 0, sum: 0 };
          const next = { count: prev.count + 1, sum: prev.sum + t.v };
          ctx.state(total).update(next);
          out.collect({ key: t.key, count: next.count, sum: next.sum, ts: t.ts, seq: t.seq });
        },
      })
      .sink('out', kafkaSink({ topic: output, format: json<RunningTotal>(), key: (r) => r.key })),
  );
}

async function produce(connector: KafkaConnector, topic: string, count: number): Promise<void> {
  const next = zipfSampler(KEYS, 1.0, 7);
  const writer = connector.writer({ writerId: 'bench-engine-producer' });
  await writer.start();
  const now = Date.now();
  for (let start = 0; start < count; start += 1_000) {
    const batch: ProducedRecord[] = [];
    for (let i = start; i < Math.min(count, start + 1_000); i++) {
      const key = `user-${next()}`;
      batch.push({ topic, key, value: JSON.stringify({ key, v: i % 100, ts: now, seq: i }) });
    }
    await writer.send(batch);
  }
  await writer.close();
}

async function latestTotal(connector: KafkaConnector, topic: string): Promise<number> {
  const admin = connector.admin();
  try {
    return (await admin.offsets(topic)).reduce((sum, p) => sum + Number(p.latest), 0);
  } finally {
    await admin.close();
  }
}

async function waitForOffsets(connector: KafkaConnector, topic: string, target: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await latestTotal(connector, topic)) < target) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${target} records in ${topic}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function engineKafkaRun(connector: KafkaConnector, input: string, output: string, records: number, dir: string): Promise<number> {
  const before = await latestTotal(connector, output);
  const started = performance.now();
  const job = await runJob(kafkaJob(input, output), {
    tenantId: 'bench',
    jobId: `bench-kafka-${randomBytes(3).toString('hex')}`,
    parallelism: { default: PIPELINE_PARALLELISM },
    kafka: connector,
    state: (ctx) => createStateBackend({ kind: 'lsm', path: join(dir, `${ctx.operatorId}-${ctx.subtask}`), cacheEntries: 1_000_000 }),
  });
  try {
    await waitForOffsets(connector, output, before + records, 180_000);
    return (records / (performance.now() - started)) * 1000;
  } finally {
    await job.stop();
  }
}

async function engineVsPassthrough(connector: KafkaConnector, topics: Record<string, string>): Promise<{ ratio: number; engineRps: number }> {
  await produce(connector, topics.input, KAFKA_RECORDS);
  const rows = [];
  const engine: number[] = [];
  const raw: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const rawRps = await passthrough({ brokers: BROKERS, sourceTopic: topics.input, sinkTopic: topics.raw, records: KAFKA_RECORDS });
    const dir = await mkdtemp(join(tmpdir(), 'weir-bench-engine-kafka-'));
    let engineRps: number;
    try {
      engineRps = await engineKafkaRun(connector, topics.input, topics.output, KAFKA_RECORDS, dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    raw.push(rawRps);
    engine.push(engineRps);
    rows.push({ run: run + 1, passthrough_rps: Math.round(rawRps), engine_rps: Math.round(engineRps), ratio: engineRps / rawRps });
  }
  printTable(rows, `engine_vs_passthrough: ${KAFKA_RECORDS} records, ${PARTITIONS} partitions, keyed running count+sum (LSM) vs raw kafkajs consume→produce`);
  return { ratio: ratio(median(engine), median(raw)), engineRps: median(engine) };
}

/**
 * Offers 80% of the measured throughput at a fixed rate; event time = scheduled time; latency read at the output.
 * The load generator and the output reader run in a child process (as producers and consumers would elsewhere),
 * so they do not take the engine's event loop; the engine process only runs the job.
 */
async function latencyAtLoad(connector: KafkaConnector, topics: Record<string, string>, rate: number): Promise<LoadResult> {
  const dir = await mkdtemp(join(tmpdir(), 'weir-bench-engine-lat-'));
  const job = await runJob(kafkaJob(topics.latencyIn, topics.latencyOut), {
    tenantId: 'bench',
    jobId: 'bench-latency',
    parallelism: { default: PIPELINE_PARALLELISM },
    kafka: connector,
    state: (ctx) => createStateBackend({ kind: 'lsm', path: join(dir, `${ctx.operatorId}-${ctx.subtask}`), cacheEntries: 1_000_000 }),
  });
  try {
    const child = fork(__filename, ['--role', 'load', '--rate', String(rate), '--in', topics.latencyIn, '--out', topics.latencyOut], {
      execArgv: ['-r', '@swc-node/register'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return await new Promise<LoadResult>((resolve, reject) => {
      child.once('message', (m) => resolve(m as LoadResult));
      child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`load generator exited with ${code}`))));
    });
  } finally {
    await job.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

interface LoadResult {
  readonly summary: LatencySummary;
  readonly sent: number;
  readonly received: number;
}

/** The child process: fixed-rate producer into `in`, reader of `out`, HDR histogram of event-time latency. */
async function loadRole(): Promise<void> {
  const rate = argument('rate', 1000);
  const input = process.argv[process.argv.indexOf('--in') + 1];
  const output = process.argv[process.argv.indexOf('--out') + 1];
  const connector = createKafkaConnector({ brokers: BROKERS, clientId: 'weir-bench-engine-load' });
  const reader = connector.reader({
    readerId: 'bench-engine-latency',
    assignments: Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: output, partition, offset: 'latest' })),
  });
  await reader.start();
  const recorder = new LatencyRecorder();
  const warmupMs = 5_000;
  const durationMs = 15_000;
  const warmupEvents = Math.floor((rate * warmupMs) / 1000);
  let received = 0;
  let reading = true;
  const readLoop = (async () => {
    while (reading) {
      const batch = await reader.poll(2_000, 100);
      const now = nowMs();
      for (const r of batch) {
        const result = JSON.parse(r.value!.toString()) as RunningTotal;
        received++;
        if (result.seq >= warmupEvents) recorder.record(now - result.ts);
      }
    }
  })();
  const next = zipfSampler(KEYS, 1.0, 9);
  const writer = connector.writer({ writerId: 'bench-engine-fixed-rate' });
  await writer.start();
  const report = await runFixedRate({ ratePerSec: rate, durationMs, warmupMs, maxBatch: 500 }, async (batch) => {
    const records: ProducedRecord[] = new Array(batch.count);
    for (let i = 0; i < batch.count; i++) {
      const key = `user-${next()}`;
      const value = JSON.stringify({ key, v: (batch.firstSeq + i) % 100, ts: batch.scheduledMs[i], seq: batch.firstSeq + i });
      records[i] = { topic: input, key, value };
    }
    await writer.send(records);
  });
  const drainUntil = Date.now() + 15_000;
  while (received < report.sent && Date.now() < drainUntil) await new Promise((resolve) => setTimeout(resolve, 50));
  reading = false;
  await readLoop;
  await Promise.all([reader.close(), writer.close()]);
  const summary = recorder.summary();
  recorder.destroy();
  process.send!({ summary, sent: report.sent, received } satisfies LoadResult);
  process.disconnect();
}

async function main(): Promise<void> {
  const benchStart = performance.now();
  const part = process.argv.includes('--part') ? process.argv[process.argv.indexOf('--part') + 1] : 'all';
  const r1 = part === 'kafka' ? null : await engineVsLoop();
  if (part === 'loop') {
    printJsonLine({ bench: 'engine', engine_vs_loop: r1 });
    return;
  }
  const suffix = randomBytes(4).toString('hex');
  const topics = {
    input: `bench.engine.in.${suffix}`,
    raw: `bench.engine.raw.${suffix}`,
    output: `bench.engine.out.${suffix}`,
    latencyIn: `bench.engine.lat-in.${suffix}`,
    latencyOut: `bench.engine.lat-out.${suffix}`,
  };
  const connector = createKafkaConnector({ brokers: BROKERS, clientId: 'weir-bench-engine' });
  const admin = connector.admin();
  await admin.ensureTopics(Object.values(topics).map((topic) => ({ topic, partitions: PARTITIONS })));
  try {
    const { ratio: r2, engineRps } = await engineVsPassthrough(connector, topics);
    if (part === 'kafka') {
      printJsonLine({ bench: 'engine', engine_vs_passthrough: r2, records_per_s: Math.round(engineRps) });
      return;
    }
    const rate = Math.max(100, Math.round(engineRps * 0.8));
    const latency = await latencyAtLoad(connector, topics, rate);
    printTable(
      [{ rate_per_s: rate, sent: latency.sent, received: latency.received, ...latencyColumns(latency.summary) }],
      'event-time latency (scheduled time → result read from the output topic) at 80% of the engine throughput',
    );
    printTable([{ runs: RUNS, total_s: (performance.now() - benchStart) / 1000 }]);
    printJsonLine({
      bench: 'engine',
      engine_vs_loop: r1,
      engine_vs_passthrough: r2,
      records_per_s: Math.round(engineRps),
      p50_ms: latency.summary.p50,
      p99_ms: latency.summary.p99,
    });
  } finally {
    await admin.deleteTopics(Object.values(topics)).catch(() => undefined);
    await admin.close();
  }
}

(process.argv.includes('--role') ? loadRole() : main()).catch((err) => {
  console.error(err);
  process.exit(1);
});

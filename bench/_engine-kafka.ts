/**
 * The Kafka half of `npm run bench -- engine` (bench/engine.ts calls `kafkaPipeline`):
 * 1. engine_vs_passthrough: Kafka → engine keyed aggregation (running count + sum per key, LSM state) → Kafka vs
 *    raw kafkajs consume → produce (bench/_kafka-baseline.ts) of the same records, same broker, alternating in one
 *    process, after `warmup` uncounted runs of each; ratio of medians (records/s from a backlog). CPU µs per record
 *    of each side is printed beside it (process.cpuUsage), the steadier figure on a shared machine.
 * 2. records_per_s: the pipeline's sustained throughput, found with fixed-rate probes (not a drain): the highest
 *    offered rate at which every event of a probe comes out within PROBE_GRACE_MS of the probe's end and the p99
 *    event-time latency of its last TAIL_MS stays under TAIL_P99_LIMIT_MS (a pipeline that falls behind shows a
 *    latency that grows for as long as the probe lasts). Probes start at the drain figure and search geometrically.
 * 3. p50_ms / p99_ms: event-time latency (scheduled send time → result read from the output topic, HDR) while the
 *    generator offers 80% of the sustained throughput at a fixed rate. The generator stamps each event with its
 *    scheduled time, so a stalled send shows up as latency (no coordinated omission). A latency run that does not
 *    keep up (same test as a probe) is repeated at 80% of its rate, at most LATENCY_ATTEMPTS times in all.
 * The generator and the output reader run in a child process (`--role load`), as producers and consumers would
 * elsewhere, so they do not take the engine's event loop; the engine process runs only the job.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRandom, zipfSampler } from '@weir/datagen';
import { defineJob, json, kafkaSink, kafkaSource, runJob, valueState, type JobDefinition, type RunningJob } from '@weir/engine';
import { createKafkaConnector, type KafkaAdmin, type KafkaConnector, type ProducedRecord } from '@weir/kafka';
import { createStateBackend } from '@weir/state';
import { passthrough } from './_kafka-baseline';
import { LatencyRecorder, type LatencySummary, latencyColumns, nowMs, printTable, ratio, runFixedRate } from './_latency';

const PARTITIONS = 4;
const BROKERS = (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const PROBE_MS = 6_000;
const TAIL_MS = 2_000;
const TAIL_P99_LIMIT_MS = 1_000;
const PROBE_GRACE_MS = 3_000;
const MAX_PROBES = 7;
/** Stop searching once the rate that failed is within this factor of the one that held. */
const SEARCH_RESOLUTION = 1.15;
const LATENCY_WARMUP_MS = 5_000;
const LATENCY_MS = 15_000;
const LATENCY_ATTEMPTS = 3;

export interface KafkaPipelineOptions {
  readonly keys: number;
  readonly records: number;
  readonly runs: number;
  /** Uncounted alternating runs of both sides first (JIT, connections, broker caches). */
  readonly warmup: number;
  readonly parallelism: number;
  /** false: engine_vs_passthrough only (for CPU profiles and A/B comparisons). */
  readonly latency: boolean;
  /** Writes a CPU profile of the engine side of the last engine_vs_passthrough run alone to this file. */
  readonly profileEngine?: string;
}

export interface KafkaPipelineResult {
  readonly engineVsPassthrough: number;
  /** Drain throughput (from a backlog), median of the runs. */
  readonly drainRps: number;
  /** Highest fixed rate the pipeline kept up with; null when latency was not measured. */
  readonly sustainedRps: number | null;
  readonly latency: LatencySummary | null;
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

async function startJob(connector: KafkaConnector, input: string, output: string, dir: string, parallelism: number): Promise<RunningJob> {
  return runJob(kafkaJob(input, output), {
    tenantId: 'bench',
    jobId: `bench-kafka-${randomBytes(3).toString('hex')}`,
    parallelism: { default: parallelism },
    kafka: connector,
    state: (ctx) => createStateBackend({ kind: 'lsm', path: join(dir, `${ctx.operatorId}-${ctx.subtask}`), cacheEntries: 1_000_000 }),
  });
}

function txValue(key: string, seq: number, ts: number): string {
  return JSON.stringify({ key, v: seq % 100, ts, seq });
}

async function produce(connector: KafkaConnector, topic: string, count: number, keys: number): Promise<void> {
  const next = zipfSampler(keys, 1.0, seededRandom(7));
  const writer = connector.writer({ writerId: 'bench-engine-producer' });
  await writer.start();
  const now = Date.now();
  for (let start = 0; start < count; start += 1_000) {
    const batch: ProducedRecord[] = [];
    for (let i = start; i < Math.min(count, start + 1_000); i++) {
      const key = `user-${next()}`;
      batch.push({ topic, key, value: txValue(key, i, now) });
    }
    await writer.send(batch);
  }
  await writer.close();
}

async function latestTotal(admin: KafkaAdmin, topic: string): Promise<number> {
  return (await admin.offsets(topic)).reduce((sum, p) => sum + Number(p.latest), 0);
}

/** Polls the output's end offsets with one admin (a new client per poll would cost the engine's process CPU). */
async function waitForOffsets(admin: KafkaAdmin, topic: string, target: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await latestTotal(admin, topic)) < target) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${target} records in ${topic}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface SideRun {
  readonly rps: number;
  readonly cpuUsPerRecord: number;
}

/** Starts the V8 profiler in this process; the returned function stops it and gives the profile. */
async function startProfile(): Promise<() => Promise<unknown>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    return profile;
  };
}

async function measured(records: number, run: () => Promise<void>): Promise<SideRun> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await run();
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { rps: (records / elapsed) * 1000, cpuUsPerRecord: (used.user + used.system) / records };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function engineVsPassthrough(
  connector: KafkaConnector,
  admin: KafkaAdmin,
  topics: Record<string, string>,
  options: KafkaPipelineOptions,
): Promise<{ ratio: number; engineRps: number }> {
  const records = options.records;
  await produce(connector, topics.input, records, options.keys);
  const rows = [];
  const engine: number[] = [];
  const raw: number[] = [];
  for (let run = -options.warmup; run < options.runs; run++) {
    const rawRun = await measured(records, async () => {
      await passthrough({ brokers: BROKERS, sourceTopic: topics.input, sinkTopic: topics.raw, records });
    });
    const dir = await mkdtemp(join(tmpdir(), 'weir-bench-engine-kafka-'));
    const before = await latestTotal(admin, topics.output);
    let engineRun: SideRun;
    try {
      const profile = options.profileEngine && run === options.runs - 1 ? await startProfile() : null;
      engineRun = await measured(records, async () => {
        const job = await startJob(connector, topics.input, topics.output, dir, options.parallelism);
        try {
          await waitForOffsets(admin, topics.output, before + records, 180_000);
        } finally {
          await job.stop();
        }
      });
      if (profile) await writeFile(options.profileEngine!, JSON.stringify(await profile()));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    if (run >= 0) {
      raw.push(rawRun.rps);
      engine.push(engineRun.rps);
    }
    rows.push({
      run: run >= 0 ? String(run + 1) : 'warm-up',
      passthrough_rps: Math.round(rawRun.rps),
      engine_rps: Math.round(engineRun.rps),
      ratio: engineRun.rps / rawRun.rps,
      passthrough_cpu_us: rawRun.cpuUsPerRecord,
      engine_cpu_us: engineRun.cpuUsPerRecord,
      cpu_ratio: rawRun.cpuUsPerRecord / engineRun.cpuUsPerRecord,
    });
  }
  printTable(
    rows,
    `engine_vs_passthrough: ${records} records, ${PARTITIONS} partitions, keyed running count+sum (LSM) vs raw kafkajs consume→produce (cpu: µs per record, stop included)`,
  );
  return { ratio: ratio(median(engine), median(raw)), engineRps: median(engine) };
}

/** What the load child reports for one fixed-rate run. */
interface LoadReport {
  readonly rate: number;
  readonly sent: number;
  readonly received: number;
  /** Events after the warm-up. */
  readonly summary: LatencySummary;
  /** Events scheduled in the last TAIL_MS. */
  readonly tail: LatencySummary;
}

interface LoadCommand {
  readonly rate: number;
  readonly warmupMs: number;
  readonly durationMs: number;
}

/** The load child, driven over IPC: one fixed-rate run per command. */
class LoadChild {
  private readonly child: ChildProcess;
  private waiting: ((report: LoadReport) => void) | null = null;
  private readonly exited: Promise<never>;

  constructor(input: string, output: string, keys: number) {
    this.child = fork(__filename, ['--role', 'load', '--in', input, '--out', output, '--keys', String(keys)], {
      execArgv: ['-r', '@swc-node/register'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (m) => this.waiting?.(m as LoadReport));
    this.exited = new Promise<never>((_, reject) => {
      this.child.once('exit', (code) => reject(new Error(`load generator exited with ${code}`)));
    });
    this.exited.catch(() => undefined);
  }

  run(command: LoadCommand): Promise<LoadReport> {
    const report = new Promise<LoadReport>((resolve) => (this.waiting = resolve));
    this.child.send(command);
    return Promise.race([report, this.exited]);
  }

  close(): void {
    this.child.disconnect();
  }
}

function keptUp(report: LoadReport): boolean {
  return report.received >= report.sent && report.tail.count > 0 && report.tail.p99 < TAIL_P99_LIMIT_MS;
}

/** Geometric search for the highest rate the pipeline keeps up with, starting at the drain throughput. */
async function sustainedRate(load: LoadChild, drainRps: number): Promise<number> {
  // Joins, JIT and the first state reads happen here, not in a probe.
  await load.run({ rate: Math.max(100, Math.round(drainRps / 2)), warmupMs: 4_000, durationMs: 0 });
  let held = 0;
  let failed = Number.POSITIVE_INFINITY;
  let rate = Math.max(100, Math.round(drainRps));
  const rows = [];
  for (let probe = 0; probe < MAX_PROBES; probe++) {
    const report = await load.run({ rate, warmupMs: 0, durationMs: PROBE_MS });
    const ok = keptUp(report);
    rows.push({ probe: probe + 1, rate_per_s: rate, sent: report.sent, received: report.received, kept_up: ok, ...latencyColumns(report.tail, 'tail_') });
    if (ok) held = Math.max(held, rate);
    else failed = Math.min(failed, rate);
    if (held > 0 && failed / held < SEARCH_RESOLUTION) break;
    if (held === 0 && rate <= 100) break;
    rate = Math.max(100, Math.round(failed === Number.POSITIVE_INFINITY ? rate * 1.3 : held === 0 ? rate * 0.6 : Math.sqrt(held * failed)));
  }
  printTable(
    rows,
    `sustained throughput: fixed-rate probes of ${PROBE_MS / 1000} s; kept up = all out within ${PROBE_GRACE_MS / 1000} s and p99 of the last ${TAIL_MS / 1000} s < ${TAIL_P99_LIMIT_MS} ms`,
  );
  return held;
}

async function latencyAtLoad(connector: KafkaConnector, topics: Record<string, string>, options: KafkaPipelineOptions, drainRps: number) {
  const dir = await mkdtemp(join(tmpdir(), 'weir-bench-engine-lat-'));
  const job = await startJob(connector, topics.latencyIn, topics.latencyOut, dir, options.parallelism);
  const load = new LoadChild(topics.latencyIn, topics.latencyOut, options.keys);
  try {
    const sustained = await sustainedRate(load, drainRps);
    // Nothing held (not even 100/s): measure at 100/s rather than not at all (the tables say so).
    let rate = Math.max(100, Math.round(0.8 * sustained));
    // The machine's spare CPU changes from minute to minute: a run that did not keep up is repeated lower, so the
    // figure reported comes from a load the pipeline sustained (each row says whether it did).
    const rows = [];
    let report: LoadReport;
    for (let attempt = 1; ; attempt++) {
      report = await load.run({ rate, warmupMs: LATENCY_WARMUP_MS, durationMs: LATENCY_MS });
      const ok = keptUp(report);
      rows.push({ attempt, rate_per_s: rate, sent: report.sent, received: report.received, kept_up: ok, ...latencyColumns(report.summary) });
      if (ok || attempt === LATENCY_ATTEMPTS) break;
      rate = Math.max(100, Math.round(rate * 0.8));
    }
    printTable(rows, 'event-time latency (scheduled time → result read from the output topic) at 80% of the sustained throughput');
    return { sustained, latency: report.summary };
  } finally {
    load.close();
    await job.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function kafkaPipeline(options: KafkaPipelineOptions): Promise<KafkaPipelineResult> {
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
    const { ratio: r2, engineRps } = await engineVsPassthrough(connector, admin, topics, options);
    if (!options.latency) return { engineVsPassthrough: r2, drainRps: engineRps, sustainedRps: null, latency: null };
    const { sustained, latency } = await latencyAtLoad(connector, topics, options, engineRps);
    return { engineVsPassthrough: r2, drainRps: engineRps, sustainedRps: sustained, latency };
  } finally {
    await admin.deleteTopics(Object.values(topics)).catch(() => undefined);
    await admin.close();
  }
}

function argument(name: string): string {
  return process.argv[process.argv.indexOf(`--${name}`) + 1];
}

/**
 * The child process: a fixed-rate producer into `in` and a reader of `out`. Sequence numbers run on across runs, so
 * results of an earlier run that arrive late are told apart from the current one's.
 */
async function loadRole(): Promise<void> {
  const input = argument('in');
  const output = argument('out');
  const connector = createKafkaConnector({ brokers: BROKERS, clientId: 'weir-bench-engine-load' });
  const reader = connector.reader({
    readerId: 'bench-engine-latency',
    assignments: Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: output, partition, offset: 'latest' })),
  });
  const writer = connector.writer({ writerId: 'bench-engine-fixed-rate' });
  await Promise.all([reader.start(), writer.start()]);
  const next = zipfSampler(Number(argument('keys')), 1.0, seededRandom(9));
  const idle = { first: 0, measuredFrom: 0, tailFrom: 0, end: 0 };
  let current = idle;
  let recorder = new LatencyRecorder();
  let tail = new LatencyRecorder();
  let received = 0;
  let reading = true;
  const readLoop = (async () => {
    while (reading) {
      const batch = await reader.poll(2_000, 100);
      const now = nowMs();
      for (const r of batch) {
        const result = JSON.parse(r.value!.toString()) as RunningTotal;
        if (result.seq < current.first || result.seq >= current.end) continue;
        received++;
        if (result.seq >= current.measuredFrom) recorder.record(now - result.ts);
        if (result.seq >= current.tailFrom) tail.record(now - result.ts);
      }
    }
  })();
  let firstSeq = 0;
  const run = async (command: LoadCommand): Promise<LoadReport> => {
    const warmupEvents = Math.floor((command.rate * command.warmupMs) / 1000);
    const events = warmupEvents + Math.floor((command.rate * command.durationMs) / 1000);
    const tailEvents = Math.min(events - warmupEvents, Math.floor((command.rate * TAIL_MS) / 1000));
    current = { first: firstSeq, measuredFrom: firstSeq + warmupEvents, tailFrom: firstSeq + events - tailEvents, end: firstSeq + events };
    recorder = new LatencyRecorder();
    tail = new LatencyRecorder();
    received = 0;
    const base = firstSeq;
    firstSeq += events;
    const report = await runFixedRate(
      { ratePerSec: command.rate, durationMs: command.durationMs, warmupMs: command.warmupMs, maxBatch: 1_000 },
      async (batch) => {
        const records: ProducedRecord[] = new Array(batch.count);
        for (let i = 0; i < batch.count; i++) {
          const key = `user-${next()}`;
          records[i] = { topic: input, key, value: txValue(key, base + batch.firstSeq + i, batch.scheduledMs[i]) };
        }
        await writer.send(records);
      },
    );
    // A run that fell behind drains here, so the next one starts on an empty pipeline.
    const graceUntil = Date.now() + PROBE_GRACE_MS;
    while (received < report.sent && Date.now() < graceUntil) await new Promise((resolve) => setTimeout(resolve, 20));
    const inTime = received;
    const drainUntil = Date.now() + 60_000;
    while (received < report.sent && Date.now() < drainUntil) await new Promise((resolve) => setTimeout(resolve, 50));
    const result = { rate: command.rate, sent: report.sent, received: inTime, summary: recorder.summary(), tail: tail.summary() };
    current = idle; // stragglers beyond the drain timeout must not reach the recorders freed below
    recorder.destroy();
    tail.destroy();
    return result;
  };
  let queue = Promise.resolve();
  process.on('message', (command) => {
    queue = queue.then(async () => {
      process.send!(await run(command as LoadCommand));
    });
  });
  await new Promise<void>((resolve) => process.once('disconnect', resolve));
  await queue;
  reading = false;
  await readLoop;
  await Promise.all([reader.close(), writer.close()]);
}

if (require.main === module && process.argv.includes('--role')) {
  loadRole().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

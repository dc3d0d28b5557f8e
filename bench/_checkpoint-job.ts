/**
 * The job half of `npm run bench -- checkpoint`: a real job host (child process, as the worker runs it) with
 * checkpoints on S3, Kafka in and out. First its capacity: records produced ahead into its input, read and
 * answered as fast as it can (exactly-once, checkpointing as in the measured runs); then it is driven at a fixed
 * share of that (70% by default, or a given rate) by a generator that knows each record's scheduled time (latency
 * is measured from the schedule, so a stall shows up instead of hiding). Measures end-to-end p50/p99
 * with at-least-once and exactly-once sinks (read_committed), then, after the measured window, SIGKILLs the
 * exactly-once job host and restarts it from its latest checkpoint: recovery is from the kill to the first committed
 * result past those visible before it. The restart is immediate: failure detection (worker heartbeats) is not in it.
 */
import { randomBytes } from 'node:crypto';
import { build } from 'hdr-histogram-js';
import { deadLetterTopic, sinkCommitsTopic, tenantTopicPrefix } from '@weir/engine';
import { createKafkaConnector, type KafkaConnector, type KafkaReader } from '@weir/kafka';
import type { JobProcess } from '../apps/worker/src/jobs/job-process';
import { inputRecords, removeJobData, startJobHost, tempDir, writeBundle } from '../test/chaos/support';

export interface JobFigures {
  readonly rate: number;
  /** Records/s the job sustained on a backlog (null when a fixed rate was given). */
  readonly capacity_rps: number | null;
  /** rate ÷ capacity. */
  readonly load_pct: number | null;
  readonly checkpoint_interval_ms: number;
  readonly alo_p50_ms: number;
  readonly alo_p99_ms: number;
  readonly eos_p50_ms: number;
  readonly eos_p99_ms: number;
  readonly recovery_s: number;
  /** Checkpoint durations inside the exactly-once job host during its measured window (trigger → sinks committed). */
  readonly job_checkpoint_p50_ms: number;
  readonly job_checkpoint_p99_ms: number;
  readonly job_checkpoints: number;
}

const PARTITIONS = 2;
const INTERVAL_MS = 500;
const TICK_MS = 20;
const RECOVERY_TAIL_S = 10;

type Delivery = 'exactly-once' | 'at-least-once';

/** `rate` in records/s, or `load`: that share of the capacity measured first. */
export type JobLoad = { readonly rate: number } | { readonly load: number };

const CAPACITY_RECORDS = 100_000;

export async function measureJob(load: JobLoad, window: { warmupS: number; measureS: number }): Promise<JobFigures> {
  const kafka = createKafkaConnector({ brokers: (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), clientId: 'weir-bench' });
  const dir = await tempDir();
  const run = randomBytes(4).toString('hex');
  const tenantId = `benchcp${run}`;
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const capacity = 'rate' in load ? null : await capacityRun(await jobHarness(kafka, dir, tenantId, `cap${run}`, 'exactly-once', cleanups));
    const rate = capacity === null ? (load as { rate: number }).rate : Math.max(1, Math.round(capacity * (load as { load: number }).load));
    const options = { rate, ...window };
    const alo = await latencyRun(kafka, await jobHarness(kafka, dir, tenantId, `alo${run}`, 'at-least-once', cleanups), options, cleanups, false);
    const eos = await latencyRun(kafka, await jobHarness(kafka, dir, tenantId, `eos${run}`, 'exactly-once', cleanups), options, cleanups, true);
    return {
      rate,
      capacity_rps: capacity === null ? null : Math.round(capacity),
      load_pct: capacity === null ? null : Math.round((rate / capacity) * 100),
      checkpoint_interval_ms: INTERVAL_MS,
      alo_p50_ms: alo.p50,
      alo_p99_ms: alo.p99,
      eos_p50_ms: eos.p50,
      eos_p99_ms: eos.p99,
      recovery_s: Number((eos.recoveryMs! / 1000).toFixed(2)),
      job_checkpoint_p50_ms: eos.checkpoints.getValueAtPercentile(50),
      job_checkpoint_p99_ms: eos.checkpoints.getValueAtPercentile(99),
      job_checkpoints: eos.checkpoints.totalCount,
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await removeJobData(tenantId, dir).catch(() => undefined);
  }
}

interface JobHarness {
  readonly jobId: string;
  readonly input: string;
  readonly output: string;
  readonly hosts: JobProcess[];
  /** Incarnation 0 starts fresh, later ones restore the latest checkpoint. */
  start(incarnation: number): Promise<JobProcess>;
}

/** The totals job's topics and bundle, and a way to start its job host; all removed by `cleanups`. */
async function jobHarness(kafka: KafkaConnector, dir: string, tenantId: string, jobId: string, delivery: Delivery, cleanups: (() => Promise<void>)[]): Promise<JobHarness> {
  const input = `${tenantTopicPrefix(tenantId)}${jobId}.in`;
  const output = `${tenantTopicPrefix(tenantId)}${jobId}.out`;
  const admin = kafka.admin();
  await admin.ensureTopics([{ topic: input, partitions: PARTITIONS }, { topic: output, partitions: PARTITIONS }]);
  await admin.close();
  cleanups.push(async () => {
    const a = kafka.admin();
    await a.deleteTopics([input, output, sinkCommitsTopic(tenantId, jobId), deadLetterTopic(tenantId, jobId)]).catch(() => undefined);
    await a.close();
  });
  const bundlePath = await writeBundle(dir, input, output);
  const hosts: JobProcess[] = [];
  cleanups.push(async () => hosts.forEach((h) => h.kill()));
  return {
    jobId,
    input,
    output,
    hosts,
    async start(incarnation) {
      const host = startJobHost({
        tenantId,
        jobId,
        bundlePath,
        parallelism: { in: PARTITIONS, totals: PARTITIONS },
        maxParallelism: 32,
        deadLetterTopic: deadLetterTopic(tenantId, jobId),
        checkpointing: { intervalMs: INTERVAL_MS, retain: 3, delivery },
        ...(incarnation > 0 ? { restoreFrom: { snapshotId: 'latest', location: `tenants/${tenantId}/jobs/${jobId}/` } } : {}),
      });
      hosts.push(host);
      await host.run();
      return host;
    },
  };
}

/**
 * Capacity: CAPACITY_RECORDS produced into the input before the job host starts, then the time from its start to
 * the last result read (read_committed: exactly-once results count when their checkpoint commits them).
 */
async function capacityRun(job: JobHarness): Promise<number> {
  const kafka = createKafkaConnector({ brokers: (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), clientId: 'weir-bench-capacity' });
  const writer = kafka.writer({ writerId: `bench-cp-cap-${job.jobId}` });
  await writer.start();
  for (let from = 0; from < CAPACITY_RECORDS; from += 5_000) await writer.send(inputRecords(job.input, from, Math.min(CAPACITY_RECORDS, from + 5_000), PARTITIONS));
  await writer.close();
  const reader = kafka.reader({
    readerId: `bench-cp-cap-out-${job.jobId}`,
    assignments: Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: job.output, partition, offset: 'earliest' })),
  });
  await reader.start();
  try {
    const started = Date.now();
    const host = await job.start(0);
    let read = 0;
    const deadline = started + 180_000;
    while (read < CAPACITY_RECORDS && Date.now() < deadline) read += (await reader.poll(5_000, 100)).length;
    const elapsedS = (Date.now() - started) / 1000;
    await host.stop();
    if (read < CAPACITY_RECORDS) throw new Error(`capacity run: ${read} of ${CAPACITY_RECORDS} results within 180 s`);
    return CAPACITY_RECORDS / elapsedS;
  } finally {
    await reader.close();
  }
}

async function latencyRun(
  kafka: KafkaConnector,
  job: JobHarness,
  options: { rate: number; warmupS: number; measureS: number },
  cleanups: (() => Promise<void>)[],
  kill: boolean,
): Promise<{ p50: number; p99: number; recoveryMs?: number; checkpoints: ReturnType<typeof build> }> {
  const { jobId, input, output, start } = job;
  let host = await start(0);

  const writer = kafka.writer({ writerId: `bench-cp-in-${jobId}` });
  await writer.start();
  const reader: KafkaReader = kafka.reader({
    readerId: `bench-cp-out-${jobId}`,
    assignments: Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: output, partition, offset: 'earliest' })),
  });
  await reader.start();
  cleanups.push(async () => {
    await writer.close();
    await reader.close();
  });

  const histogram = build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000 });
  const t0 = Date.now() + 200;
  const scheduled = (i: number) => t0 + (i * 1000) / options.rate;
  const warmup = Math.round(options.warmupS * options.rate);
  const measureEnd = Math.round((options.warmupS + options.measureS) * options.rate);
  // The kill comes after the measured window, with 10 s more input to recover on: the outage is not in the latency.
  const total = kill ? measureEnd + RECOVERY_TAIL_S * options.rate : measureEnd;
  let produced = 0;
  let maxSeen = -1;
  let firstPast: { index: number; at: number } | null = null;
  let pastIndex = Number.POSITIVE_INFINITY;
  let sending = false;
  const ticker = setInterval(() => {
    if (sending) return; // the next tick sends what is due: a slow send delays records, and latency shows it
    const due = Math.min(total, Math.floor(((Date.now() - t0) * options.rate) / 1000));
    if (due <= produced) return;
    sending = true;
    const from = produced;
    produced = due;
    writer
      .send(inputRecords(input, from, due, PARTITIONS))
      .catch((err: unknown) => console.error('bench producer:', err))
      .finally(() => (sending = false));
  }, TICK_MS);
  cleanups.push(async () => clearInterval(ticker));

  const seen = new Set<number>();
  const checkpoints = build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000 });
  let lastCheckpoint = -1;
  const readUntil = async (done: () => boolean, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!done() && Date.now() < deadline) {
      const latest = host.latestCheckpoint;
      if (latest && latest.checkpointId !== lastCheckpoint) {
        lastCheckpoint = latest.checkpointId;
        if (maxSeen >= warmup && maxSeen < measureEnd) checkpoints.recordValue(Math.max(1, latest.durationMs));
      }
      for (const record of await reader.poll(5_000, 100)) {
        const now = Date.now();
        const { i } = JSON.parse(record.value!.toString()) as { i: number };
        if (i > maxSeen) maxSeen = i;
        if (i > pastIndex && firstPast === null) firstPast = { index: i, at: now };
        if (seen.has(i)) continue; // at-least-once may repeat a result after a restart; count the first
        seen.add(i);
        if (i >= warmup && i < measureEnd) histogram.recordValue(Math.max(1, Math.round(now - scheduled(i))));
      }
    }
  };

  let recoveryMs: number | undefined;
  if (kill) {
    // After the measured window: SIGKILL, restart from the latest checkpoint at once.
    await readUntil(() => maxSeen >= measureEnd, (options.warmupS + options.measureS) * 1000 + 30_000);
    pastIndex = maxSeen;
    const killedAt = Date.now();
    host.kill();
    await host.exited;
    host = await start(1);
    await readUntil(() => firstPast !== null, 60_000);
    if (firstPast === null) throw new Error('no output after the restart within 60 s');
    recoveryMs = (firstPast as { at: number }).at - killedAt;
  }
  await readUntil(() => seen.size >= total, (options.warmupS + options.measureS + RECOVERY_TAIL_S) * 1000 + 60_000);
  clearInterval(ticker);
  if (seen.size < total) throw new Error(`${jobId}: ${seen.size} of ${total} results arrived`);
  await host.stop();
  return { p50: histogram.getValueAtPercentile(50), p99: histogram.getValueAtPercentile(99), recoveryMs, checkpoints };
}

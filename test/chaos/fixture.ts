/**
 * The vitest fixture of the chaos tests, apart from support.ts so that the checkpoint bench (a plain node process)
 * can import the helpers without importing vitest.
 */
import { randomBytes } from 'node:crypto';
import { sinkCommitsTopic } from '@weir/engine';
import { createKafkaConnector, type KafkaConnector } from '@weir/kafka';
import { afterAll, beforeAll, expect } from 'vitest';
import type { JobProcess } from '../../apps/worker/src/jobs/job-process';
import type { StartJobMessage } from '../../apps/worker/src/jobs/ipc';
import { expectedOutput, type Output, readAll, removeJobData, sortOutputs, startJobHost, tempDir, totalsJobMessage, writeBundle } from './support';

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
export async function expectExactTotals(kafka: KafkaConnector, topic: string, partitions: number, records: number): Promise<void> {
  const read = await readAll(kafka, topic, partitions, (n) => n >= records, 30_000);
  const outputs = sortOutputs(read.map((r) => JSON.parse(r.value!.toString()) as Output));
  const seen = new Set<string>();
  const duplicates = outputs.filter((o) => (seen.has(`${o.k}/${o.i}`) ? true : (seen.add(`${o.k}/${o.i}`), false)));
  expect(duplicates.slice(0, 5), 'duplicated results').toEqual([]);
  const got = new Set(outputs.map((o) => o.i));
  const missing = Array.from({ length: records }, (_, i) => i).filter((i) => !got.has(i));
  expect(missing.slice(0, 5), `missing ${missing.length}`).toEqual([]);
  expect(outputs).toEqual(expectedOutput(records));
}

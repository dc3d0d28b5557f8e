import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBlobStore, type BlobStore } from '@weir/blob';
import { buildBundle } from '@weir/bundle';
import { loadConfig } from '@weir/config';
import type { ConsumedRecord, KafkaConnector, ProducedRecord } from '@weir/kafka';
import type { ForkedJobHost } from '../../apps/worker/src/jobs/job-host-forks';
import { JobProcess, type JobStart } from '../../apps/worker/src/jobs/job-process';
import type { JobCheckpointing } from '../../apps/worker/src/jobs/ipc';

export const KEYS = 40;

export interface Input {
  readonly k: string;
  readonly i: number;
  readonly v: number;
}

export interface Output {
  readonly k: string;
  readonly i: number;
  readonly count: number;
  readonly sum: number;
}

/** Record i: key k(i mod KEYS), value i mod 7, each key pinned to one partition so its order is deterministic. */
export function inputRecords(topic: string, from: number, to: number, partitions: number): ProducedRecord[] {
  const out: ProducedRecord[] = [];
  for (let i = from; i < to; i++) {
    const key = i % KEYS;
    out.push({ topic, partition: key % partitions, key: `k${key}`, value: JSON.stringify({ k: `k${key}`, i, v: i % 7 }) });
  }
  return out;
}

/** What an uninterrupted run emits: per input record, the key's running count and sum. */
export function expectedOutput(count: number): Output[] {
  const totals = new Map<string, { count: number; sum: number }>();
  const out: Output[] = [];
  for (let i = 0; i < count; i++) {
    const k = `k${i % KEYS}`;
    const t = totals.get(k) ?? { count: 0, sum: 0 };
    t.count++;
    t.sum += i % 7;
    totals.set(k, t);
    out.push({ k, i, count: t.count, sum: t.sum });
  }
  return sortOutputs(out);
}

export function sortOutputs(out: Output[]): Output[] {
  return out.sort((a, b) => (a.k === b.k ? a.i - b.i : a.k < b.k ? -1 : 1));
}

/** A keyed running count/sum job reading `input` and writing `output`, built into a bundle the job host loads. */
export async function writeBundle(dir: string, input: string, output: string, ids = { keyed: 'totals', sink: 'out' }): Promise<string> {
  const entry = join(dir, `job-${randomBytes(3).toString('hex')}.ts`);
  await writeFile(entry, totalsJobSource(input, output, ids));
  const built = await buildBundle(entry);
  const path = join(dir, `bundle-${built.sha256}.js`);
  await writeFile(path, built.code);
  return path;
}

export const TOTALS_OPERATORS = ['in', 'by-key', 'totals', 'out'];

/** The job's TypeScript source. */
export function totalsJobSource(input: string, output: string, ids = { keyed: 'totals', sink: 'out' }): string {
  return `
import { defineJob, json, kafkaSink, kafkaSource, valueState, type KeyedProcessFunction } from '@weir/engine';
const totals = valueState<{ count: number; sum: number }>('totals');
const running: KeyedProcessFunction<string, { k: string; i: number; v: number }, { k: string; i: number; count: number; sum: number }> = {
  states: [totals],
  processElement(r, ctx, out) {
    const t = ctx.state(totals).value() ?? { count: 0, sum: 0 };
    const next = { count: t.count + 1, sum: t.sum + r.v };
    ctx.state(totals).update(next);
    out.collect({ k: r.k, i: r.i, ...next });
  },
};
export default defineJob({ name: 'chaos-totals', maxParallelism: 32 }, (job) => {
  job
    .source('in', kafkaSource<{ k: string; i: number; v: number }>({ topic: '${input}', format: json() }))
    .keyBy('by-key', (r) => r.k)
    .process('${ids.keyed}', running)
    .sink('${ids.sink}', kafkaSink<{ k: string; i: number; count: number; sum: number }>({ topic: '${output}', format: json(), key: (r) => r.k }));
});
`;
}

/** The object store job hosts reach through their worker (one for the test process, as a worker has one). */
let workerBlobs: BlobStore | undefined;

/** A job host for `message`: forked now, or `host`, a warm spare (WarmJobHosts) that has been handed nothing yet. */
export function startJobHost(message: JobStart, host?: ForkedJobHost): JobProcess {
  workerBlobs ??= createBlobStore(loadConfig({ ...process.env, WEIR_LOG_LEVEL: 'warn' }));
  return new JobProcess(message, workerBlobs, host);
}

export const EXACTLY_ONCE: JobCheckpointing = { intervalMs: 400, retain: 3, delivery: 'exactly-once' };

/**
 * How incarnation `n` of the totals job host starts (2 source and 2 keyed subtasks, exactly-once, checkpointing to
 * S3): the first fresh, every later one restoring the latest checkpoint.
 */
export function totalsJobMessage(job: { tenantId: string; jobId: string; bundlePath: string; dir: string }, incarnation: number): JobStart {
  return {
    tenantId: job.tenantId,
    jobId: job.jobId,
    bundlePath: job.bundlePath,
    parallelism: { in: 2, totals: 2 },
    maxParallelism: 32,
    deadLetterTopic: `weir.${job.tenantId}.${job.jobId}.dead-letters`,
    checkpointing: EXACTLY_ONCE,
    ...(incarnation > 0 ? { restoreFrom: { snapshotId: 'latest', location: `tenants/${job.tenantId}/jobs/${job.jobId}/` } } : {}),
  };
}

export async function readAll(kafka: KafkaConnector, topic: string, partitions: number, until: (n: number) => boolean, idleMs: number): Promise<ConsumedRecord[]> {
  const reader = kafka.reader({
    readerId: `test-chaos-read-${randomBytes(4).toString('hex')}`,
    assignments: Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 'earliest' })),
  });
  await reader.start();
  const out: ConsumedRecord[] = [];
  let last = Date.now();
  try {
    while (Date.now() - last < idleMs) {
      const batch = await reader.poll(5_000, 200);
      if (batch.length > 0) last = Date.now();
      for (const r of batch) out.push(r);
      if (until(out.length)) {
        // Keep reading a little: a duplicate would arrive after the expected count.
        until = () => false;
        idleMs = Math.min(idleMs, 2_500);
      }
    }
  } finally {
    await reader.close();
  }
  return out;
}

export async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'weir-chaos-'));
}

export async function removeJobData(tenantId: string, dir: string): Promise<void> {
  const blob = createBlobStore(loadConfig({ ...process.env, WEIR_LOG_LEVEL: 'warn' }));
  const keys: string[] = [];
  for await (const info of blob.list(`tenants/${tenantId}/`)) keys.push(info.key);
  for (const key of keys) await blob.delete(key);
  blob.close();
  await rm(dir, { recursive: true, force: true });
}

/**
 * A fresh run over two job hosts whose inputs are already full: a rules topic holding many versions (the last one is
 * what the run must judge by) and a transactions topic on two partitions, one read by each process. Every record
 * must be judged by that last version: each process's data source waits until the rules subtask (in process 0) has
 * passed the rules on into the Kafka exchange, heard of over the run control (runs/bootstrap-relay.ts).
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle } from '@weir/bundle';
import { exchangeTopic, runControlTopic } from '@weir/engine';
import { createKafkaConnector, type KafkaConnector } from '@weir/kafka';
import type { JobProcess } from '../../apps/worker/src/jobs/job-process';
import { readAll, removeJobData, startJobHost, tempDir } from './support';

const run = randomBytes(4).toString('hex');
const tenantId = `bootstrap${run}`;
const jobId = 'judge';
const topics = { rules: `t.${tenantId}.rules`, tx: `t.${tenantId}.tx`, out: `t.${tenantId}.out` };
const RULES = 3_000;
const TX = 2_000;

const jobSource = `
import { defineJob, json, kafkaSink, kafkaSource, type KeyedBroadcastProcessFunction } from '@weir/engine';
interface Rule { version: number }
const judge: KeyedBroadcastProcessFunction<string, { n: number }, Rule, Rule, { n: number; version: number }> = {
  processElement(tx, ctx, out) {
    out.collect({ n: tx.n, version: ctx.broadcastState.get('rule')?.version ?? 0 });
  },
  processBroadcastElement(rule, ctx) {
    ctx.broadcastState.put('rule', rule);
  },
};
export default defineJob({ name: 'bootstrap', maxParallelism: 16 }, (b) => {
  const tx = b.source<{ n: number }>('tx', kafkaSource({ topic: '${topics.tx}', format: json() }));
  const rules = b.source<Rule>('rules', kafkaSource({ topic: '${topics.rules}', format: json() })).broadcast();
  tx.keyBy('by-n', (t) => String(t.n % 11)).connect(rules).process('judge', judge)
    .sink('out', kafkaSink<{ n: number; version: number }>({ topic: '${topics.out}', format: json(), key: (r) => String(r.n) }));
});
`;

describe('broadcast bootstrap of a fresh run over two job hosts', () => {
  let kafka: KafkaConnector;
  let dir = '';
  let bundlePath = '';
  const hosts: JobProcess[] = [];

  beforeAll(async () => {
    kafka = createKafkaConnector({ brokers: (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), clientId: 'weir-test' });
    const admin = kafka.admin();
    await admin.ensureTopics([{ topic: topics.rules, partitions: 1 }, { topic: topics.tx, partitions: 2 }, { topic: topics.out, partitions: 2 }]);
    await admin.close();
    dir = await tempDir();
    const entry = join(dir, 'job.ts');
    await writeFile(entry, jobSource);
    const built = await buildBundle(entry);
    bundlePath = join(dir, `bundle-${built.sha256}.js`);
    await writeFile(bundlePath, built.code);
    const writer = kafka.writer({ writerId: `bootstrap-in-${run}` });
    await writer.start();
    await writer.send(Array.from({ length: RULES }, (_, i) => ({ topic: topics.rules, partition: 0, key: 'rule', value: JSON.stringify({ version: i + 1 }) })));
    await writer.send(Array.from({ length: TX }, (_, n) => ({ topic: topics.tx, partition: n % 2, value: JSON.stringify({ n }) })));
    await writer.close();
  });

  afterAll(async () => {
    for (const h of hosts) h.kill();
    const admin = kafka.admin();
    await admin.deleteTopics([...Object.values(topics), exchangeTopic(tenantId, jobId, 'judge'), runControlTopic(tenantId, jobId)]).catch(() => undefined);
    await admin.close();
    await removeJobData(tenantId, dir);
  });

  it('judges every record by the rules the topic held at start, in both processes', async () => {
    // Process 1 starts first: its data source must still wait for the rules subtask of process 0.
    for (const index of [1, 0]) {
      const host = startJobHost({
        tenantId,
        jobId,
        bundlePath,
        parallelism: { tx: 2, rules: 1, judge: 2 },
        maxParallelism: 16,
        deadLetterTopic: `weir.${tenantId}.${jobId}.dead-letters`,
        process: { index, count: 2 },
        subtasks: { tx: [index], rules: [index], 'by-n': [index], judge: [index], out: [index] },
      });
      hosts.push(host);
    }
    await Promise.all(hosts.map((h) => h.run()));
    const out = await readAll(kafka, topics.out, 2, (n) => n >= TX, 30_000);
    const judged = out.map((r) => JSON.parse(r.value!.toString()) as { n: number; version: number });
    expect(new Set(judged.map((j) => j.n)).size).toBe(TX);
    expect(judged.filter((j) => j.version !== RULES)).toEqual([]);
  });
});

/**
 * Broadcast before data on a fresh start, over the real broker: a rules topic that already holds many rule versions
 * (the last one is what a job started now must judge by) and a data topic that already holds transactions, so data
 * flows from the first instant. Every record must be judged by the rules as they stood at start: the data sources
 * wait until the rules source has read up to the end offsets it saw (a transactional marker included) and passed
 * the rules on. Without that, the data (declared first, read at once) races the rules and meets older versions or
 * none. The same over the Kafka exchange with the job split over two instances (as two job hosts run it): the
 * second instance's data source waits for the first's rules subtask, heard of through the run's peers.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineJob, exchangeTopic, json, type KeyedBroadcastProcessFunction, kafkaSource, MemoryBootstrapPeers, memorySink, runJob, memoryIoOf, type RunningJob } from '@weir/engine';
import { createKafkaConnector, type KafkaAdmin, type KafkaConnector } from '@weir/kafka';
import { createStateBackend } from '@weir/state';

const BROKERS = (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const suffix = randomBytes(4).toString('hex');
const topics = { rules: `t.bootstrap${suffix}.rules`, tx: `t.bootstrap${suffix}.tx` };
const RULES = 5_000;
const TX = 2_000;

interface Rule {
  version: number;
}

const judge: KeyedBroadcastProcessFunction<string, { n: number }, Rule, Rule, number> = {
  processElement(_tx, ctx, out) {
    out.collect(ctx.broadcastState.get('rule')?.version ?? 0);
  },
  processBroadcastElement(rule, ctx) {
    ctx.broadcastState.put('rule', rule);
  },
};

const job = defineJob({ name: 'bootstrap', maxParallelism: 16 }, (b) => {
  const tx = b.source<{ n: number }>('tx', kafkaSource({ topic: topics.tx, format: json() }));
  const rules = b.source<Rule>('rules', kafkaSource({ topic: topics.rules, format: json() })).broadcast();
  tx.keyBy('by-n', (t) => String(t.n % 11)).connect(rules).process('judge', judge).sink('out', memorySink());
});

describe('broadcast bootstrap over Kafka', () => {
  let kafka: KafkaConnector;
  let admin: KafkaAdmin;

  beforeAll(async () => {
    kafka = createKafkaConnector({ brokers: BROKERS, clientId: 'weir-bootstrap-test' });
    admin = kafka.admin();
    await admin.ensureTopics([{ topic: topics.rules, partitions: 1 }, { topic: topics.tx, partitions: 2 }]);
    // The rules through a transaction: the topic's end offset is then a commit marker no reader ever returns.
    const rulesWriter = kafka.writer({ writerId: `bootstrap-rules-${suffix}`, transactionalId: `bootstrap-rules-${suffix}` });
    await rulesWriter.start();
    const tx = await rulesWriter.transaction();
    await tx.send(Array.from({ length: RULES }, (_, i) => ({ topic: topics.rules, partition: 0, key: 'rule', value: JSON.stringify({ version: i + 1 }) })));
    await tx.commit();
    await rulesWriter.close();
    const writer = kafka.writer({ writerId: `bootstrap-tx-${suffix}` });
    await writer.start();
    await writer.send(Array.from({ length: TX }, (_, n) => ({ topic: topics.tx, partition: n % 2, value: JSON.stringify({ n }) })));
    await writer.close();
  });

  afterAll(async () => {
    await admin?.deleteTopics([topics.rules, topics.tx]).catch(() => undefined);
    await admin?.close();
  });

  it('judges every record by the rules the topic held at start, though data is there from the first instant', async () => {
    const running = await runJob(job, {
      tenantId: `bootstrap${suffix}`, jobId: 'j', kafka, parallelism: { default: 2, rules: 1, judge: 2 },
      state: () => createStateBackend({ kind: 'memory' }),
    });
    try {
      const versions = await judged([running]);
      expect(versions).toHaveLength(TX);
      expect(versions.filter((v) => v !== RULES)).toEqual([]);
    } finally {
      await running.stop();
    }
  });

  it('does the same over the Kafka exchange, the data source of another process waiting for the rules subtask', async () => {
    const common = {
      tenantId: `bootstrap${suffix}`, jobId: 'kx', kafka, parallelism: { default: 2, rules: 1, judge: 2 }, exchange: 'kafka' as const,
      bootstrapPeers: new MemoryBootstrapPeers(), state: () => createStateBackend({ kind: 'memory' }),
    };
    const running = [
      await runJob(job, { ...common, subtasks: { tx: [0], rules: [0], judge: [0] } }),
      await runJob(job, { ...common, subtasks: { tx: [1], rules: [], judge: [1] } }),
    ];
    try {
      const versions = await judged(running);
      expect(versions).toHaveLength(TX);
      expect(versions.filter((v) => v !== RULES)).toEqual([]);
    } finally {
      await Promise.all(running.map((r) => r.stop()));
      await admin.deleteTopics([exchangeTopic(common.tenantId, common.jobId, 'judge')]).catch(() => undefined);
    }
  });
});

/** The versions that judged the records, from every instance, once all records are judged (or a minute passed). */
async function judged(running: readonly RunningJob[]): Promise<number[]> {
  const all = () => running.flatMap((r) => memoryIoOf(r).collected('out').map((o) => o.value as number));
  const deadline = Date.now() + 60_000;
  while (all().length < TX && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  return all();
}

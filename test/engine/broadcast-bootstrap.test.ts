/**
 * Broadcast before data on a fresh start, over the real broker: a rules topic that already holds many rule versions
 * (the last one is what a job started now must judge by) and a data topic that already holds transactions, so data
 * flows from the first instant. Every record must be judged by the rules as they stood at start: the data sources
 * wait until the rules source has read up to the end offsets it saw (a transactional marker included) and passed
 * the rules on. Without that, the data (declared first, read at once) races the rules and meets older versions or
 * none.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineJob, json, type KeyedBroadcastProcessFunction, kafkaSource, memorySink, runJob, memoryIoOf } from '@weir/engine';
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
      const deadline = Date.now() + 60_000;
      while (memoryIoOf(running).collected('out').length < TX && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const versions = memoryIoOf(running).collected('out').map((r) => r.value as number);
      expect(versions).toHaveLength(TX);
      expect(versions.filter((v) => v !== RULES)).toEqual([]);
    } finally {
      await running.stop();
    }
  });
});

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaConnector, type KafkaAdmin, type KafkaConnector } from '@weir/kafka';
import { createStateBackend } from '@weir/state';
import { readCount } from '../support/read-topic';
import {
  defineJob,
  exchangeTopic,
  json,
  kafkaSink,
  kafkaSource,
  type KeyedBroadcastProcessFunction,
  runJob,
  type RunningJob,
  valueState,
} from '@weir/engine';

const BROKERS = (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const suffix = randomBytes(4).toString('hex');
const jobId = `exchange-${suffix}`;
const topics = { tx: `test.engine.x-tx.${suffix}`, rules: `test.engine.x-rules.${suffix}`, out: `test.engine.x-out.${suffix}` };

interface Tx {
  card: string;
  amount: number;
  seq: number;
}
interface Rule {
  version: number;
  limit: number;
}
interface Verdict {
  card: string;
  seq: number;
  total: number;
  version: number;
  subtask: number;
}

const total = valueState<number>('total');

/** Running total per card, judged by the latest rule; outputs name the rule version and the subtask that ran it. */
const judge: KeyedBroadcastProcessFunction<string, Tx, Rule, Rule, Verdict> = {
  states: [total],
  processElement(tx, ctx, out) {
    const t = (ctx.state(total).value() ?? 0) + tx.amount;
    ctx.state(total).update(t);
    const rule = ctx.broadcastState.get('rule');
    out.collect({ card: tx.card, seq: tx.seq, total: t, version: rule?.version ?? 0, subtask: ctx.operator.subtask });
  },
  processBroadcastElement(rule, ctx) {
    ctx.broadcastState.put('rule', rule);
  },
};

const job = defineJob({ name: 'exchange', maxParallelism: 8 }, (b) => {
  const rules = b.source<Rule>('rules', kafkaSource({ topic: topics.rules, format: json<Rule>() })).broadcast();
  b.source<Tx>('tx', kafkaSource({ topic: topics.tx, format: json<Tx>() }))
    .keyBy('by-card', (t) => t.card)
    .connect(rules)
    .process('judge', judge)
    .sink('out', kafkaSink({ topic: topics.out, format: json<Verdict>(), key: (v) => v.card }));
});


describe('Kafka exchange between two runner instances', () => {
  let connector: KafkaConnector;
  let admin: KafkaAdmin;
  let stateDir: string;

  beforeAll(async () => {
    connector = createKafkaConnector({ brokers: BROKERS, clientId: 'weir-engine-exchange-test' });
    admin = connector.admin();
    await admin.ensureTopics([
      { topic: topics.tx, partitions: 2 },
      { topic: topics.rules, partitions: 1 },
      { topic: topics.out, partitions: 2 },
    ]);
    stateDir = await mkdtemp(join(tmpdir(), 'weir-exchange-'));
  });

  afterAll(async () => {
    await admin.deleteTopics([...Object.values(topics), exchangeTopic('t1', jobId, 'judge')]);
    await admin.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  it('routes keys to the instance owning their key group, with broadcast rules applied on both', async () => {
    const writer = connector.writer({ writerId: `exchange-test-${suffix}` });
    await writer.start();
    await writer.send([{ topic: topics.rules, partition: 0, value: JSON.stringify({ version: 1, limit: 100 }) }]);
    const cards = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const txs: Tx[] = Array.from({ length: 400 }, (_, seq) => ({ card: cards[seq % cards.length], amount: seq % 10, seq }));

    const common = {
      tenantId: 't1',
      jobId,
      exchange: 'kafka' as const,
      parallelism: { default: 1, judge: 2 },
      kafka: connector,
    };
    const instances: RunningJob[] = [
      await runJob(job, {
        ...common,
        subtasks: { judge: [0] },
        state: (ctx) => createStateBackend({ kind: 'lsm', path: join(stateDir, `a-${ctx.subtask}`) }),
      }),
      await runJob(job, {
        ...common,
        subtasks: { judge: [1], tx: [], rules: [] },
        state: (ctx) => createStateBackend({ kind: 'lsm', path: join(stateDir, `b-${ctx.subtask}`) }),
      }),
    ];
    // Order the rule before the data in every key-group partition of the exchange: wait until the broadcast record
    // sits in all of them, then write the transactions.
    const exchange = exchangeTopic('t1', jobId, 'judge');
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const offsets = await admin.offsets(exchange).catch(() => []);
      if (offsets.length === 8 && offsets.every((o) => Number(o.latest) >= 1)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await writer.send(txs.map((t) => ({ topic: topics.tx, partition: t.seq % 2, value: JSON.stringify(t) })));
    await writer.close();

    const out = await readCount(connector, topics.out, 2, txs.length);
    await Promise.all(instances.map((i) => i.stop()));

    const verdicts = out.map((r) => JSON.parse(r.value!.toString()) as Verdict);
    expect(verdicts).toHaveLength(txs.length);
    const routing = instances[0].routingTable('judge');
    for (const card of cards) {
      const mine = verdicts.filter((v) => v.card === card);
      // Every record of a key ran on the one subtask owning its key group, and the running total is exact.
      expect(new Set(mine.map((v) => v.subtask)).size).toBe(1);
      const expectedTotal = txs.filter((t) => t.card === card).reduce((s, t) => s + t.amount, 0);
      expect(Math.max(...mine.map((v) => v.total))).toBe(expectedTotal);
      expect(mine.every((v) => v.version === 1)).toBe(true);
    }
    // Both instances did work: the key groups of the cards span both subtasks.
    expect(new Set(verdicts.map((v) => v.subtask))).toEqual(new Set([0, 1]));
    expect(routing.version).toBe(1);
  });
});

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaConnector, type ConsumedRecord, type KafkaAdmin, type KafkaConnector, type KafkaReader } from '@weir/kafka';
import { createStateBackend } from '@weir/state';
import { defineJob, encodeKey, exchangeTopic, json, kafkaSink, kafkaSource, keyGroupFor, runJob, valueState } from '@weir/engine';

const BROKERS = (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const suffix = randomBytes(4).toString('hex');
const jobId = `move-${suffix}`;
const topics = { tx: `test.engine.m-tx.${suffix}`, out: `test.engine.m-out.${suffix}` };

interface Tx {
  card: string;
  amount: number;
  seq: number;
}
interface Total {
  card: string;
  seq: number;
  total: number;
  subtask: number;
}

const total = valueState<number>('total');
const job = defineJob({ name: 'move', maxParallelism: 8 }, (b) =>
  b
    .source<Tx>('tx', kafkaSource({ topic: topics.tx, format: json<Tx>() }))
    .keyBy('by-card', (t) => t.card)
    .process<Total>('totals', {
      states: [total],
      processElement(tx, ctx, out) {
        const t = (ctx.state(total).value() ?? 0) + tx.amount;
        ctx.state(total).update(t);
        out.collect({ card: tx.card, seq: tx.seq, total: t, subtask: ctx.operator.subtask });
      },
    })
    .sink('out', kafkaSink({ topic: topics.out, format: json<Total>() })),
);

async function take(reader: KafkaReader, count: number): Promise<ConsumedRecord[]> {
  const out: ConsumedRecord[] = [];
  const deadline = Date.now() + 45_000;
  while (out.length < count && Date.now() < deadline) out.push(...(await reader.poll(count - out.length, 200)));
  return out;
}

describe('live key-group move over the Kafka exchange', () => {
  let connector: KafkaConnector;
  let admin: KafkaAdmin;
  let stateDir: string;

  beforeAll(async () => {
    connector = createKafkaConnector({ brokers: BROKERS, clientId: 'weir-engine-move-test' });
    admin = connector.admin();
    await admin.ensureTopics([
      { topic: topics.tx, partitions: 1 },
      { topic: topics.out, partitions: 1 },
    ]);
    stateDir = await mkdtemp(join(tmpdir(), 'weir-move-'));
  });

  afterAll(async () => {
    await admin.deleteTopics([...Object.values(topics), exchangeTopic('t1', jobId, 'totals')]);
    await admin.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  it('hands a key group and its state to another subtask: totals continue exactly, each record once', async () => {
    const running = await runJob(job, {
      tenantId: 't1',
      jobId,
      exchange: 'kafka',
      parallelism: { default: 1, totals: 2 },
      kafka: connector,
      state: (ctx) => createStateBackend({ kind: 'lsm', path: join(stateDir, `${ctx.subtask}`) }),
    });
    const reader = connector.reader({ readerId: `move-check-${suffix}`, assignments: [{ topic: topics.out, partition: 0, offset: 'earliest' }] });
    await reader.start();
    const writer = connector.writer({ writerId: `move-test-${suffix}` });
    await writer.start();
    const txs: Tx[] = Array.from({ length: 300 }, (_, seq) => ({ card: seq % 3 === 0 ? 'a' : `c${seq % 7}`, amount: (seq % 5) + 1, seq }));
    const send = (list: Tx[]) => writer.send(list.map((t) => ({ topic: topics.tx, value: JSON.stringify(t) })));

    await send(txs.slice(0, 150));
    const before = await take(reader, 150);
    const kg = keyGroupFor(encodeKey('a'), 8);
    const from = running.routingTable('totals').ownerOf(kg);
    const table = await running.moveKeyGroups('totals', [{ keyGroup: kg, toSubtask: 1 - from }]);
    expect(table.ownerOf(kg)).toBe(1 - from);
    await send(txs.slice(150));
    const after = await take(reader, 150);
    await Promise.all([writer.close(), reader.close()]);
    await running.stop();

    const results = [...before, ...after].map((r) => JSON.parse(r.value!.toString()) as Total);
    expect(results.map((r) => r.seq).sort((x, y) => x - y)).toEqual(txs.map((t) => t.seq));
    const a = results.filter((r) => r.card === 'a').sort((x, y) => x.seq - y.seq);
    let expected = 0;
    for (const r of a) {
      expected += txs[r.seq].amount;
      expect(r.total).toBe(expected);
      expect(r.subtask).toBe(r.seq < 150 ? from : 1 - from);
    }
  });
});

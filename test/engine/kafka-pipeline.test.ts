import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaConnector, type KafkaAdmin, type KafkaConnector } from '@weir/kafka';
import { createStateBackend } from '@weir/state';
import { readCount } from '../support/read-topic';
import { aggregate, defineJob, json, kafkaSink, kafkaSource, runJob, tumbling, type WindowResult } from '@weir/engine';

const BROKERS = (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const suffix = randomBytes(4).toString('hex');
const topics = { input: `test.engine.in.${suffix}`, output: `test.engine.out.${suffix}`, dlq: `test.engine.dlq.${suffix}` };

interface Tx {
  card: string;
  amount: number;
  ts: number;
}

const counted = aggregate<string, Tx, { count: number; sum: number }, { count: number; sum: number }>({
  createAccumulator: () => ({ count: 0, sum: 0 }),
  add: (t, a) => ({ count: a.count + 1, sum: a.sum + t.amount }),
  getResult: (a) => a,
});

const job = defineJob({ name: 'card-totals', maxParallelism: 32 }, (b) =>
  b
    .source<Tx>(
      'tx',
      kafkaSource({
        topic: topics.input,
        format: json<Tx>(),
        timestamps: (t) => t.ts,
        // The input is out of order by up to 3 s (ts = i·37 mod 3000): a bound that covers it keeps every record on
        // time however the batches fall, and no idleness timeout lets a slow partition's records turn late.
        watermarks: { maxOutOfOrdernessMs: 3_000 },
      }),
    )
    .keyBy('by-card', (t) => t.card)
    .window('totals', tumbling(1_000), counted)
    .sink('out', kafkaSink({ topic: topics.output, format: json(), key: (r) => r.key })),
);


describe('engine on Kafka: keyed tumbling aggregation with LSM state and a dead-letter topic', () => {
  let connector: KafkaConnector;
  let admin: KafkaAdmin;
  let stateDir: string;

  beforeAll(async () => {
    connector = createKafkaConnector({ brokers: BROKERS, clientId: 'weir-engine-test' });
    admin = connector.admin();
    await admin.ensureTopics([
      { topic: topics.input, partitions: 3 },
      { topic: topics.output, partitions: 2 },
      { topic: topics.dlq, partitions: 1 },
    ]);
    stateDir = await mkdtemp(join(tmpdir(), 'weir-engine-'));
  });

  afterAll(async () => {
    await admin.deleteTopics(Object.values(topics));
    await admin.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  it('produces exact per-card window totals and sends undecodable records to the DLQ with the reason', async () => {
    const cards = ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6'];
    const txs: Tx[] = Array.from({ length: 600 }, (_, i) => ({ card: cards[(i * 7) % cards.length], amount: i % 50, ts: (i * 37) % 3_000 }));
    const writer = connector.writer({ writerId: `engine-test-${suffix}` });
    await writer.start();
    await writer.send(txs.map((t, i) => ({ topic: topics.input, partition: i % 3, value: JSON.stringify(t) })));
    await writer.send([
      { topic: topics.input, partition: 1, value: '{not json' },
      { topic: topics.input, partition: 2, value: Buffer.from([0xff, 0x00]) },
    ]);
    // One late-enough record per partition pushes every partition's watermark past the last window.
    await writer.send([0, 1, 2].map((partition) => ({ topic: topics.input, partition, value: JSON.stringify({ card: 'flush', amount: 0, ts: 60_000 }) })));
    await writer.close();

    const expected = new Map<string, { count: number; sum: number }>();
    for (const t of txs) {
      const id = `${t.card}@${t.ts - (t.ts % 1000)}`;
      const acc = expected.get(id) ?? { count: 0, sum: 0 };
      expected.set(id, { count: acc.count + 1, sum: acc.sum + t.amount });
    }

    const running = await runJob(job, {
      tenantId: 't1',
      jobId: `card-totals-${suffix}`,
      parallelism: { default: 2 },
      kafka: connector,
      deadLetterTopic: topics.dlq,
      state: (ctx) => createStateBackend({ kind: 'lsm', path: join(stateDir, `${ctx.operatorId}-${ctx.subtask}`) }),
    });
    const out = await readCount(connector, topics.output, 2, expected.size);
    const letters = await readCount(connector, topics.dlq, 1, 2);
    const positions = running.sourcePositions();
    const metrics = running.metrics();
    await running.stop();

    const results = out.map((r) => JSON.parse(r.value!.toString()) as WindowResult<string, { count: number; sum: number }>);
    expect(results).toHaveLength(expected.size);
    expect(new Map(results.map((r) => [`${r.key}@${r.start}`, r.result]))).toEqual(expected);
    expect(out.every((r) => r.key?.toString() === JSON.parse(r.value!.toString()).key)).toBe(true);

    expect(letters).toHaveLength(2);
    expect(letters.map((l) => l.headers['weir-reason']?.toString())).toEqual(['decode', 'decode']);
    expect(letters.map((l) => l.headers['weir-operator']?.toString())).toEqual(['tx', 'tx']);
    expect(letters.map((l) => l.value!.toString('hex')).sort()).toEqual([Buffer.from('{not json').toString('hex'), 'ff00'].sort());

    // The engine owns offsets: every partition's position is past the last record written (201 per partition +1 poison on 1 and 2).
    const merged = Object.assign({}, ...positions.tx) as Record<string, string>;
    expect(Object.values(merged).map(Number).sort()).toEqual([201, 202, 202]);
    const windowIn = metrics.filter((m) => m.operatorId === 'totals').reduce((s, m) => s + m.recordsIn, 0);
    expect(windowIn).toBe(603);
  });
});

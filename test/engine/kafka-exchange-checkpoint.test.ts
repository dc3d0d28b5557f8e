import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaConnector, type ConsumedRecord, type KafkaAdmin, type KafkaConnector } from '@weir/kafka';
import { createStateBackend } from '@weir/state';
import {
  type CheckpointSnapshot,
  defineJob,
  encodeKey,
  exchangeTopic,
  json,
  kafkaSink,
  kafkaSource,
  keyGroupFor,
  runJob,
  type RunJobOptions,
  type RunningJob,
  valueState,
} from '@weir/engine';
import { parseJson } from '../support/read-topic';

const BROKERS = (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const suffix = randomBytes(4).toString('hex');
const jobId = `xcp-${suffix}`;
const topics = { tx: `test.engine.xcp-tx.${suffix}`, out: `test.engine.xcp-out.${suffix}` };
const TX_PARTITIONS = 4;

interface Tx {
  card: string;
  amount: number;
  seq: number;
}
interface Total {
  card: string;
  seq: number;
  total: number;
}

const total = valueState<number>('total');
const job = defineJob({ name: 'exchange-checkpoint', maxParallelism: 16 }, (b) =>
  b
    .source<Tx>('tx', kafkaSource({ topic: topics.tx, format: json<Tx>() }))
    .keyBy('by-card', (t) => t.card)
    .process<Total>('totals', {
      states: [total],
      processElement(tx, ctx, out) {
        const t = (ctx.state(total).value() ?? 0) + tx.amount;
        ctx.state(total).update(t);
        out.collect({ card: tx.card, seq: tx.seq, total: t });
      },
    })
    .sink('out', kafkaSink({ topic: topics.out, format: json<Total>(), key: (t) => t.card })),
);

const CARDS = Array.from({ length: 40 }, (_, i) => `card-${i}`);
// A card's transactions always sit in one source partition, so they reach its keyed subtask in order (one channel).
const txs: Tx[] = Array.from({ length: 1800 }, (_, seq) => ({ card: CARDS[(seq * 7) % CARDS.length], amount: (seq % 9) + 1, seq }));
const partitionOf = (t: Tx) => CARDS.indexOf(t.card) % TX_PARTITIONS;

/** Per seq, the running total its card has after it (the exact answer of an uninterrupted run). */
const expectedTotals = new Map<number, number>();
{
  const sums = new Map<string, number>();
  for (const t of txs) {
    const s = (sums.get(t.card) ?? 0) + t.amount;
    sums.set(t.card, s);
    expectedTotals.set(t.seq, s);
  }
}

describe('checkpoints across processes over the Kafka exchange', () => {
  let connector: KafkaConnector;
  let admin: KafkaAdmin;
  let stateDir: string;

  beforeAll(async () => {
    connector = createKafkaConnector({ brokers: BROKERS, clientId: 'weir-engine-xcp-test' });
    admin = connector.admin();
    await admin.ensureTopics([
      { topic: topics.tx, partitions: TX_PARTITIONS },
      { topic: topics.out, partitions: 1 },
    ]);
    stateDir = await mkdtemp(join(tmpdir(), 'weir-xcp-'));
  });

  afterAll(async () => {
    await admin.deleteTopics([...Object.values(topics), exchangeTopic('t1', jobId, 'totals')]);
    await admin.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  /** In chunks, one after another: each partition receives its transactions in seq order. */
  const send = async (list: Tx[], chunk = list.length) => {
    const writer = connector.writer({ writerId: `xcp-${suffix}-${randomBytes(2).toString('hex')}` });
    await writer.start();
    for (let i = 0; i < list.length; i += chunk) {
      await writer.send(list.slice(i, i + chunk).map((t) => ({ topic: topics.tx, partition: partitionOf(t), value: JSON.stringify(t) })));
    }
    await writer.close();
  };

  /** The seqs a cut's source offsets have not consumed yet: per partition, everything past its offset. */
  const afterCut = (cut: CheckpointSnapshot, upTo: number): number[] => {
    const offsets: Record<string, string> = Object.assign({}, ...cut.subtasks.filter((s) => s.stageId === 'tx').map((s) => s.sourcePositions));
    const seen = new Map<number, number>();
    const out: number[] = [];
    for (const t of txs.slice(0, upTo)) {
      const p = partitionOf(t);
      const index = seen.get(p) ?? 0;
      seen.set(p, index + 1);
      if (index >= Number(offsets[`${topics.tx}:${p}`] ?? 0)) out.push(t.seq);
    }
    return out.sort((a, b) => a - b);
  };

  /** One instance per "process": each runs subtask `i` of every stage, as a deployment's job hosts do. */
  const startProcesses = (n: number, incarnation: number, restore?: CheckpointSnapshot): Promise<RunningJob[]> =>
    Promise.all(
      Array.from({ length: n }, (_, i) => {
        const options: RunJobOptions = {
          tenantId: 't1',
          jobId,
          exchange: 'kafka',
          parallelism: n,
          subtasks: { tx: [i], totals: [i] },
          incarnation,
          kafka: connector,
          state: (ctx) => createStateBackend({ kind: 'lsm', path: join(stateDir, `${incarnation}-${ctx.operatorId}-${ctx.subtask}`) }),
          ...(restore ? { restore } : {}),
        };
        return runJob(job, options);
      }),
    );

  /** The output topic from `from` on, until `count` records arrived. */
  const readOut = async (from: string, count: number): Promise<ConsumedRecord[]> => {
    const reader = connector.reader({ readerId: `xcp-read-${suffix}-${randomBytes(2).toString('hex')}`, assignments: [{ topic: topics.out, partition: 0, offset: from }] });
    await reader.start();
    const out: ConsumedRecord[] = [];
    const deadline = Date.now() + 45_000;
    try {
      while (out.length < count && Date.now() < deadline) out.push(...(await reader.poll(2_000, 200)));
      const settle = Date.now() + 1_000; // an extra (duplicate) record would show up here
      while (Date.now() < settle) out.push(...(await reader.poll(2_000, 200)));
    } finally {
      await reader.close();
    }
    return out;
  };
  const outEnd = async () => (await admin.offsets(topics.out))[0].latest;

  const expectExact = (records: ConsumedRecord[], seqs: number[]) => {
    const totals = records.map((r) => parseJson<Total>(r));
    expect(totals.map((t) => t.seq).sort((a, b) => a - b)).toEqual(seqs);
    for (const t of totals) expect(t.total, `total after seq ${t.seq}`).toBe(expectedTotals.get(t.seq));
  };

  let checkpoint: CheckpointSnapshot;

  it('takes one consistent cut over three processes: every key group once, source offsets and exchange positions', async () => {
    const processes = await startProcesses(3, 1);
    await send(txs.slice(0, 600));
    const first = await readOut('earliest', 600);
    expectExact(first, txs.slice(0, 600).map((t) => t.seq));
    // The cut is taken while input flows. Every process triggers the same id; each resolves with its own subtasks' parts.
    const flowing = send(txs.slice(600, 1200), 25);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const parts = await Promise.all(processes.map((p) => p.triggerCheckpoint(1)));
    await flowing;
    checkpoint = { checkpointId: 1, subtasks: parts.flatMap((p) => p.subtasks) };
    const keyed = checkpoint.subtasks.filter((s) => s.stageId === 'totals');
    expect(keyed.map((s) => s.subtask).sort()).toEqual([0, 1, 2]);
    const keyGroups = keyed.flatMap((s) => [...(s.keyGroups?.keys() ?? [])]).sort((a, b) => a - b);
    expect(keyGroups).toEqual(Array.from({ length: 16 }, (_, kg) => kg));
    for (const s of keyed) expect(Object.keys(s.exchangePositions ?? {}).length).toBeGreaterThan(0);
    const cutAt = 1200 - afterCut(checkpoint, 1200).length;
    expect(cutAt).toBeGreaterThanOrEqual(600);

    // The processes die with output past the cut written: a restore must not count that input twice in state.
    expectExact(await readOut('earliest', 1200), txs.slice(0, 1200).map((t) => t.seq));
    await Promise.all(processes.map((p) => p.stop()));
  });

  it('restores the three-process cut into one process: state as of the cut, input replayed once', async () => {
    const from = await outEnd();
    const [single] = await startProcesses(1, 2, checkpoint);
    await send(txs.slice(1200, 1350));
    const expected = afterCut(checkpoint, 1350);
    expectExact(await readOut(from, expected.length), expected);
    await single.stop();
  });

  it('restores the same cut into four processes', async () => {
    const from = await outEnd();
    const processes = await startProcesses(4, 3, checkpoint);
    await send(txs.slice(1350, 1500));
    const expected = afterCut(checkpoint, 1500);
    expectExact(await readOut(from, expected.length), expected);
    await Promise.all(processes.map((p) => p.stop()));
  });

  it('moves a key group between processes while input replays, and the next cut holds it in its new owner', async () => {
    const from = await outEnd();
    const [a, b] = await startProcesses(2, 4, checkpoint);
    const busiest = keyGroupFor(encodeKey(CARDS[0]), 16);
    const owner = a.routingTable('totals').ownerOf(busiest);
    const [old, next] = owner === 0 ? [a, b] : [b, a];
    // The replay of everything after cut 1 is under way: the move happens mid-stream.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const handover = await old.releaseKeyGroup('totals', busiest, 1 - owner);
    await next.adoptKeyGroup('totals', busiest, 1 - owner, handover);
    expect(old.routingTable('totals').ownerOf(busiest)).toBe(1 - owner);
    expect(next.routingTable('totals').ownerOf(busiest)).toBe(1 - owner);
    const expected = afterCut(checkpoint, 1500);
    expectExact(await readOut(from, expected.length), expected);

    const parts = await Promise.all([a, b].map((p) => p.triggerCheckpoint(2)));
    const cut: CheckpointSnapshot = { checkpointId: 2, subtasks: parts.flatMap((p) => p.subtasks) };
    const holders = cut.subtasks.filter((s) => s.stageId === 'totals' && s.keyGroups?.has(busiest)).map((s) => s.subtask);
    expect(holders).toEqual([1 - owner]);
    await Promise.all([a, b].map((p) => p.stop()));

    // Restored from the cut taken after the move: totals go on exactly from where the moved key group was.
    const end = await outEnd();
    const [single] = await startProcesses(1, 5, cut);
    await send(txs.slice(1500));
    expectExact(await readOut(end, 300), txs.slice(1500).map((t) => t.seq));
    await single.stop();
  });
});

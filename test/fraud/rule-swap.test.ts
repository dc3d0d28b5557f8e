import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeKey, keyGroupFor, runJob } from '@weir/engine';
import { type ConsumedRecord, createKafkaConnector, type KafkaAdmin, type KafkaConnector } from '@weir/kafka';
import type { VersionedRule } from '@weir/rules';
import { createStateBackend } from '@weir/state';
import { produceTransactions } from '../../apps/cli/src/generate/produce-transactions';
import { type Alert, buildFraudJob, OPERATOR_IDS, type RuleAck } from '../../examples/fraud-detection';
import { parseJson as parse, readUntil } from '../support/read-topic';

const BROKERS = (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const suffix = randomBytes(4).toString('hex');
const topics = {
  transactionsTopic: `test.fraud.swap.tx.${suffix}`,
  rulesTopic: `test.fraud.swap.rules.${suffix}`,
  alertsTopic: `test.fraud.swap.alerts.${suffix}`,
  ruleAcksTopic: `test.fraud.swap.acks.${suffix}`,
};
const MAX_PARALLELISM = 8;
/** Alerts on every transaction, so every judgement is visible and names its version. */
const everyTx = (version: number): VersionedRule => ({
  ruleId: 'every-tx', version, state: 'ACTIVE', groupingKeys: ['payer'], function: 'COUNT', comparison: '>=', limit: 1, windowMs: 1_000,
});


describe('fraud job: a rule version swap under load on Kafka', () => {
  let kafka: KafkaConnector;
  let admin: KafkaAdmin;
  let stateDir: string;

  beforeAll(async () => {
    kafka = createKafkaConnector({ brokers: BROKERS, clientId: 'weir-fraud-swap-test' });
    admin = kafka.admin();
    await admin.ensureTopics([
      { topic: topics.transactionsTopic, partitions: 2 },
      { topic: topics.rulesTopic, partitions: 1 },
      { topic: topics.alertsTopic, partitions: 2 },
      { topic: topics.ruleAcksTopic, partitions: 1 },
    ]);
    stateDir = await mkdtemp(join(tmpdir(), 'weir-fraud-swap-'));
  });

  afterAll(async () => {
    await admin.deleteTopics(Object.values(topics));
    await admin.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  it('judges every transaction by exactly one version, switching once per input channel, and by v2 after the acks', async () => {
    const writer = kafka.writer({ writerId: `fraud-swap-${suffix}` });
    await writer.start();
    await writer.send([{ topic: topics.rulesTopic, key: 'every-tx', value: JSON.stringify(everyTx(1)) }]);
    const job = buildFraudJob({ ...topics, maxWindowMs: 60_000, maxOutOfOrdernessMs: 200, idleTimeoutMs: 60_000, maxParallelism: MAX_PARALLELISM });
    const running = await runJob(job, {
      tenantId: 't-fraud',
      jobId: `fraud-swap-${suffix}`,
      parallelism: { default: 2 },
      kafka,
      state: (ctx) => createStateBackend({ kind: 'lsm', path: join(stateDir, `${ctx.operatorId}-${ctx.subtask}`) }),
    });
    try {
      const acked = (version: number) => (rs: ConsumedRecord[]) => rs.map(parse<RuleAck>).filter((a) => a.ruleVersion === version).length >= 2;
      await readUntil(kafka, topics.ruleAcksTopic, 1, acked(1));

      // Part 1 at a fixed rate with v2 published half-way through: the swap happens while transactions flow.
      const part1 = produceTransactions(kafka, { seed: 1, ratePerSec: 1_500 }, { topic: topics.transactionsTopic, count: 3_000, partitions: 2, writerId: `swap-p1-${suffix}` });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await writer.send([{ topic: topics.rulesTopic, key: 'every-tx', value: JSON.stringify(everyTx(2)) }]);
      await part1;
      const acks = (await readUntil(kafka, topics.ruleAcksTopic, 1, acked(2))).map(parse<RuleAck>);
      // Part 2 only after every routing subtask acknowledged v2: all of it must be judged by v2.
      await produceTransactions(kafka, { seed: 2, ratePerSec: 1_500 }, { topic: topics.transactionsTopic, count: 1_500, partitions: 2, writerId: `swap-p2-${suffix}` });
      const flush = { txId: 'flush', ts: Date.now() + 600_000, payer: 'flush', beneficiary: 'flush', card: 'flush', merchant: 'flush', amount: 1 };
      await writer.send([0, 1].map((partition) => ({ topic: topics.transactionsTopic, partition, value: JSON.stringify({ ...flush, txId: `flush-${partition}` }) })));

      const inputs = (await readUntil(kafka, topics.transactionsTopic, 2, (rs) => rs.length >= 4_502)).filter((r) => !parse<{ txId: string }>(r).txId.startsWith('flush'));
      expect(inputs).toHaveLength(4_500);
      const alerts = (await readUntil(kafka, topics.alertsTopic, 2, (rs) => rs.length >= 4_500, 1_500)).map(parse<Alert>);

      // Exactly one judgement per transaction: none lost, none judged twice.
      const versionOf = new Map<string, number[]>();
      for (const a of alerts) versionOf.set(a.txId, [...(versionOf.get(a.txId) ?? []), a.ruleVersion]);
      expect(alerts).toHaveLength(4_500);
      expect(inputs.every((r) => versionOf.get(parse<{ txId: string }>(r).txId)?.length === 1)).toBe(true);

      // Per input channel (source partition → routing subtask), in offset order: v1 … v1 v2 … v2.
      const routing = running.routingTable(OPERATOR_IDS.route);
      const channels = new Map<string, number[]>();
      for (const r of [...inputs].sort((a, b) => a.partition - b.partition || Number(a.offset) - Number(b.offset))) {
        const txId = parse<{ txId: string }>(r).txId;
        const subtask = routing.ownerOf(keyGroupFor(encodeKey(txId), MAX_PARALLELISM));
        const channel = `${r.partition}->${subtask}`;
        channels.set(channel, [...(channels.get(channel) ?? []), versionOf.get(txId)![0]]);
      }
      for (const [, versions] of channels) {
        const switchAt = versions.indexOf(2);
        expect(versions.slice(0, switchAt === -1 ? versions.length : switchAt).every((v) => v === 1)).toBe(true);
        if (switchAt !== -1) expect(versions.slice(switchAt).every((v) => v === 2)).toBe(true);
      }
      // Each subtask's v2 ack says where in its input it switched: per partition, the first offset judged by v2.
      const positionOf = (subtask: number) => acks.find((a) => a.ruleVersion === 2 && a.subtask === subtask)?.inputPosition;
      for (const r of inputs) {
        const txId = parse<{ txId: string }>(r).txId;
        const subtask = routing.ownerOf(keyGroupFor(encodeKey(txId), MAX_PARALLELISM));
        const from = BigInt(positionOf(subtask)?.[`${topics.transactionsTopic}:${r.partition}`] ?? '0');
        expect(`${txId} v${versionOf.get(txId)![0]}`).toBe(`${txId} v${BigInt(r.offset) >= from ? 2 : 1}`);
      }
      expect(inputs.filter((r) => parse<{ txId: string }>(r).txId.startsWith('tx-2-')).every((r) => versionOf.get(parse<{ txId: string }>(r).txId)![0] === 2)).toBe(true);
      // v1 was acknowledged before the first transaction was sent.
      expect(alerts.filter((a) => a.ruleVersion === 1).length).toBeGreaterThan(0);
    } finally {
      await writer.close();
      await running.stop();
    }
  });
});

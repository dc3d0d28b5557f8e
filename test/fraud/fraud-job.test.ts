import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransactionStream } from '@weir/datagen';
import { exchangeTopic, type JobDefinition, MemoryBootstrapPeers, runJob, type RunJobOptions, type RunningJob } from '@weir/engine';
import { createKafkaConnector, type KafkaAdmin, type KafkaConnector } from '@weir/kafka';
import type { VersionedRule } from '@weir/rules';
import { createStateBackend } from '@weir/state';
import { produceTransactions } from '../../apps/cli/src/generate/produce-transactions';
import { type Alert, buildFraudJob, type RuleAck } from '../../examples/fraud-detection';
import { referenceAlerts } from './reference-evaluator';
import { parseJson as parse, readUntil } from '../support/read-topic';

const BROKERS = (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const suffix = randomBytes(4).toString('hex');
const TENANT = 't-fraud';
const topicsFor = (run: string) => ({
  transactionsTopic: `test.fraud.tx.${run}.${suffix}`,
  rulesTopic: `test.fraud.rules.${run}.${suffix}`,
  alertsTopic: `test.fraud.alerts.${run}.${suffix}`,
  ruleAcksTopic: `test.fraud.acks.${run}.${suffix}`,
});

const RULES: VersionedRule[] = [
  { ruleId: 'payer-spend', version: 1, state: 'ACTIVE', groupingKeys: ['payer'], aggregateField: 'amount', function: 'SUM', comparison: '>', limit: 2_000_000, windowMs: 2_000 },
  { ruleId: 'card-at-merchant', version: 3, state: 'ACTIVE', groupingKeys: ['card', 'merchant'], function: 'COUNT', comparison: '>=', limit: 3, windowMs: 1_000 },
];
const RATE = 2_000;
const COUNT = 6_000;
const streamOptions = {
  seed: 20_261_129,
  ratePerSec: RATE,
  burst: { field: 'merchant' as const, key: 'm-viral', share: 0.3, atMs: 1_000, forMs: 1_000 },
};


const byId = (a: Alert, b: Alert) => (a.alertId < b.alertId ? -1 : a.alertId > b.alertId ? 1 : 0);

type Layout = (job: JobDefinition, base: Omit<RunJobOptions, 'state'>, stateDir: string) => Promise<RunningJob[]>;

const lsm = (dir: string, prefix: string): RunJobOptions['state'] => (ctx) => createStateBackend({ kind: 'lsm', path: join(dir, `${prefix}${ctx.operatorId}-${ctx.subtask}`) });

/** One runner instance, memory exchange between the operators. */
const oneInstance: Layout = async (job, base, dir) => [await runJob(job, { ...base, state: lsm(dir, 'a-') })];

/**
 * Two runner instances (as two workers would run them) splitting the keyed subtasks over the Kafka exchange; what one
 * job host hears from the others over the run control, they hear from each other through shared peers.
 */
const twoInstances: Layout = async (job, base, dir) => {
  const common = { ...base, exchange: 'kafka' as const, bootstrapPeers: new MemoryBootstrapPeers() };
  return [
    await runJob(job, { ...common, subtasks: { 'route-by-rule': [0], 'evaluate-rules': [0] }, state: lsm(dir, 'a-') }),
    await runJob(job, { ...common, subtasks: { transactions: [], rules: [], 'route-by-rule': [1], 'evaluate-rules': [1] }, state: lsm(dir, 'b-') }),
  ];
};

describe('fraud-detection job on Kafka with LSM state', () => {
  let kafka: KafkaConnector;
  let admin: KafkaAdmin;
  let stateDir: string;
  const created: string[] = [];

  beforeAll(async () => {
    kafka = createKafkaConnector({ brokers: BROKERS, clientId: 'weir-fraud-test' });
    admin = kafka.admin();
    stateDir = await mkdtemp(join(tmpdir(), 'weir-fraud-'));
  });

  /** A run's topics (created, and deleted after all), its dead-letter topic and its job id. */
  const jobTopics = async (run: string) => {
    const topics = topicsFor(run);
    const dlqTopic = `test.fraud.dlq.${run}.${suffix}`;
    const jobId = `fraud-${run}-${suffix}`;
    created.push(...Object.values(topics), dlqTopic, exchangeTopic(TENANT, jobId, 'route-by-rule'), exchangeTopic(TENANT, jobId, 'evaluate-rules'));
    await admin.ensureTopics([
      { topic: topics.transactionsTopic, partitions: 2 },
      { topic: topics.rulesTopic, partitions: 1 },
      { topic: topics.alertsTopic, partitions: 2 },
      { topic: topics.ruleAcksTopic, partitions: 1 },
      { topic: dlqTopic, partitions: 1 },
    ]);
    return { topics, dlqTopic, jobId };
  };

  afterAll(async () => {
    await admin.deleteTopics(created);
    await admin.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  it.each([
    ['in one runner (memory exchange)', 'mem', oneInstance],
    ['in two runners splitting the subtasks (Kafka exchange)', 'kx', twoInstances],
  ] as const)('raises exactly the alerts a reference evaluator computes over the generated transactions, %s', async (_title, run, layout) => {
    const { topics, dlqTopic, jobId } = await jobTopics(run);
    const writer = kafka.writer({ writerId: `fraud-test-${run}-${suffix}` });
    await writer.start();
    await writer.send(RULES.map((r) => ({ topic: topics.rulesTopic, key: r.ruleId, value: JSON.stringify(r) })));

    const job = buildFraudJob({ ...topics, maxWindowMs: 60_000, maxOutOfOrdernessMs: 200, idleTimeoutMs: 60_000, maxParallelism: 8 });
    const instances = await layout(job, { tenantId: TENANT, jobId, parallelism: { default: 2 }, kafka, deadLetterTopic: dlqTopic }, stateDir);
    try {
      // Transactions are sent only once every routing subtask acknowledged both rules: all of them are judged by them.
      const acks = (await readUntil(kafka, topics.ruleAcksTopic, 1, (rs) => rs.length >= 4)).map(parse<RuleAck>);
      expect(acks.map((a) => `${a.outcome} ${a.ruleId}@${a.ruleVersion} #${a.subtask}`).sort()).toEqual([
        'applied card-at-merchant@3 #0',
        'applied card-at-merchant@3 #1',
        'applied payer-spend@1 #0',
        'applied payer-spend@1 #1',
      ]);

      const startTime = Date.now() - Math.ceil((COUNT / RATE) * 1_000) - 1_000; // all due at once: sent as fast as batches go
      const summary = await produceTransactions(kafka, streamOptions, { topic: topics.transactionsTopic, count: COUNT, partitions: 2, startTime });
      expect(summary.sent).toBe(COUNT);
      const txs = new TransactionStream({ ...streamOptions, startTime }).range(0, COUNT);
      // A malformed transaction goes to the dead-letter topic; one far-future record per partition moves event time past every window.
      const last = txs[txs.length - 1].ts;
      const flush = (partition: number) => ({ txId: `flush-${partition}`, ts: last + 120_000, payer: 'flush', beneficiary: 'flush', card: 'flush', merchant: 'flush', amount: 1 });
      await writer.send([
        { topic: topics.transactionsTopic, partition: 0, value: JSON.stringify({ txId: 'malformed', ts: last }) },
        ...[0, 1].map((partition) => ({ topic: topics.transactionsTopic, partition, value: JSON.stringify(flush(partition)) })),
      ]);

      const expected = referenceAlerts(RULES, txs).sort(byId);
      expect(new Set(expected.map((a) => a.ruleId))).toEqual(new Set(RULES.map((r) => r.ruleId)));
      expect(expected.some((a) => a.key.includes('m-viral'))).toBe(true);

      const alerts = (await readUntil(kafka, topics.alertsTopic, 2, (rs) => rs.length >= expected.length, 1_500)).map(parse<Alert>).sort(byId);
      expect(alerts.length).toBe(expected.length);
      expect(alerts).toEqual(expected);

      const letters = await readUntil(kafka, dlqTopic, 1, (rs) => rs.length >= 1);
      expect(letters.map((l) => [l.headers['weir-reason']?.toString(), l.headers['weir-operator']?.toString()])).toEqual([['user-function', 'checked-transactions']]);
      expect(letters[0].headers['weir-error']?.toString()).toMatch(/transaction field "payer" must be a non-empty string/);
    } finally {
      await writer.close();
      await Promise.all(instances.map((i) => i.stop()));
    }
  });

  it('judges transactions that wait in Kafka before the job starts by the rules already published: the data sources of both runners wait for the rules subtask (broadcast bootstrap over the Kafka exchange)', async () => {
    const run = 'boot';
    const { topics, dlqTopic, jobId } = await jobTopics(run);
    const writer = kafka.writer({ writerId: `fraud-test-${run}-${suffix}` });
    await writer.start();
    const count = 2_000;
    // Everything is in Kafka before the job starts: without the bootstrap, the first transactions meet no rule.
    await writer.send(RULES.map((r) => ({ topic: topics.rulesTopic, key: r.ruleId, value: JSON.stringify(r) })));
    const startTime = Date.now() - Math.ceil((count / RATE) * 1_000) - 1_000;
    await produceTransactions(kafka, streamOptions, { topic: topics.transactionsTopic, count, partitions: 2, startTime });
    const txs = new TransactionStream({ ...streamOptions, startTime }).range(0, count);
    const last = txs[txs.length - 1].ts;
    await writer.send([0, 1].map((partition) => ({
      topic: topics.transactionsTopic,
      partition,
      value: JSON.stringify({ txId: `flush-${partition}`, ts: last + 120_000, payer: 'flush', beneficiary: 'flush', card: 'flush', merchant: 'flush', amount: 1 }),
    })));
    await writer.close();
    const expected = referenceAlerts(RULES, txs).sort(byId);
    expect(expected.length).toBeGreaterThan(0);

    const job = buildFraudJob({ ...topics, maxWindowMs: 60_000, maxOutOfOrdernessMs: 200, idleTimeoutMs: 60_000, maxParallelism: 8 });
    // The second runner reads a transactions partition too: its source waits for the first runner's rules subtask.
    const common = { tenantId: TENANT, jobId, parallelism: { default: 2 }, kafka, deadLetterTopic: dlqTopic, exchange: 'kafka' as const, bootstrapPeers: new MemoryBootstrapPeers() };
    const instances = [
      await runJob(job, { ...common, subtasks: { transactions: [0], rules: [0], 'route-by-rule': [0], 'evaluate-rules': [0] }, state: lsm(stateDir, 'boot-a-') }),
      await runJob(job, { ...common, subtasks: { transactions: [1], rules: [], 'route-by-rule': [1], 'evaluate-rules': [1] }, state: lsm(stateDir, 'boot-b-') }),
    ];
    try {
      const alerts = (await readUntil(kafka, topics.alertsTopic, 2, (rs) => rs.length >= expected.length, 1_500)).map(parse<Alert>).sort(byId);
      expect(alerts).toEqual(expected);
    } finally {
      await Promise.all(instances.map((i) => i.stop()));
    }
  });
});

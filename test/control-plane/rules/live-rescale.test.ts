/**
 * The fraud job rescaled live with rules in force: its two keyed stages (the rule router, keyed by transaction, and
 * the evaluator behind it, keyed by rule and grouping key, both with the rules as broadcast state) go from 2 to 4
 * subtasks in the same run. The joining subtasks take the rules from the subtasks they take key groups from, and the
 * evaluator aligns over the router's new subtasks from their first barrier on. Every transaction is then judged once,
 * by the version in force; the next rollout is acknowledged by all four routing subtasks; and back to 2.
 */
import type { KafkaConnector } from '@weir/kafka';
import { beforeAll, describe, expect, it } from 'vitest';
import { produceTransactions } from '../../../apps/cli/src/generate/produce-transactions';
import type { Alert, FraudJobTopics } from '../../../examples/fraud-detection';
import { platformFixture } from '../../support/platform';
import { waitForDeployment, type Api } from '../deployments/support';
import { deployFraud, everyTx, FRAUD_PARTITIONS, FRAUD_TOPICS, parse, readUntil, waitForRollout } from './support';

describe('the fraud job rescaled live with rules in force', () => {
  const platform = platformFixture({ name: 'rulescale', topics: FRAUD_TOPICS, partitions: FRAUD_PARTITIONS, workerSlots: 8 });
  const { run } = platform;
  let kafka: KafkaConnector;
  let topics: FraudJobTopics;
  let client: Api;
  let deploymentId: string;
  let sent = 0;
  const rulesPath = () => `/v1/deployments/${deploymentId}/rules`;
  const send = async (seed: number, count: number) => {
    await produceTransactions(kafka, { seed, ratePerSec: 2_000 }, { topic: topics.transactionsTopic, count, partitions: 2, writerId: `rulescale-${run}-${seed}` });
    sent += count;
  };
  const rescaleTo = async (n: number) => {
    const patched = await client.patch(`/v1/deployments/${deploymentId}`, { parallelism: { default: n } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const d = await waitForDeployment(client, deploymentId, `RUNNING at ${n}`, (x) => x.status === 'RUNNING' && (x as unknown as { parallelism: { default: number } }).parallelism.default === n, 120_000);
    expect(d.runNo, 'the same run: live, not a restart').toBe(1);
    expect((d as unknown as { rescale: { state: string } | null }).rescale?.state).toBe('DONE');
  };

  beforeAll(async () => {
    ({ kafka, topics, client } = platform);
    deploymentId = await deployFraud(platform, 2);
  });

  it('judges every transaction once, by the version in force, through 2 → 4 → 2 with a rollout in between', async () => {
    const v1 = await client.post(rulesPath(), { rules: [everyTx(1)] });
    expect(v1.status, JSON.stringify(v1.body)).toBe(201);
    expect((await waitForRollout(client, deploymentId, v1.body.rollout.id as string, 90_000)).phase).toBe('ACTIVE');
    await send(200, 600);

    // While transactions flow, 2 → 4.
    const flowing = send(201, 1_500);
    await rescaleTo(4);
    await flowing;
    await send(202, 600);
    const v1Count = sent;

    // The next version: acknowledged by four routing subtasks, the two that joined included.
    const v2 = await client.post(rulesPath(), { rules: [everyTx(0)] });
    expect(v2.status).toBe(201);
    const r2 = await waitForRollout(client, deploymentId, v2.body.rollout.id as string, 90_000);
    expect(r2.phase).toBe('ACTIVE');
    const routing = r2.subtasks.filter((s) => s.operatorId === 'route-by-rule');
    expect(routing.map((s) => [s.subtask, s.appliedVersion])).toEqual([[0, 2], [1, 2], [2, 2], [3, 2]]);
    await send(300, 600);
    await rescaleTo(2);
    await send(301, 600);

    // Flush: event time far ahead on both partitions, so every pending judgement is made.
    const flush = { ts: Date.now() + 600_000, payer: 'flush', beneficiary: 'flush', card: 'flush', merchant: 'flush', amount: 1 };
    const writer = kafka.writer({ writerId: `rulescale-flush-${run}` });
    await writer.start();
    await writer.send([0, 1].map((partition) => ({ topic: topics.transactionsTopic, partition, value: JSON.stringify({ ...flush, txId: `flush-${partition}` }) })));
    await writer.close();

    const alerts = (await readUntil(kafka, topics.alertsTopic, 2, (rs) => rs.length >= sent, 2_000)).map(parse<Alert>).filter((a) => !a.txId.startsWith('flush'));
    const versions = new Map<string, number[]>();
    for (const a of alerts) versions.set(a.txId, [...(versions.get(a.txId) ?? []), a.ruleVersion]);
    const twice = [...versions].filter(([, v]) => v.length > 1);
    expect(twice.slice(0, 3), 'judged more than once').toEqual([]);
    expect(versions.size, 'every transaction judged').toBe(sent);
    // Routed before the rescale's end (and so before v2 was published): v1, the joiners had it from the start. Sent
    // after every routing subtask acknowledged v2: v2. Seed 202, sent just before v2 was published, may still be
    // routed after a subtask applied it (nothing waits for it to be read first): either version, each once.
    const byTx = (seed: number) => [...versions].filter(([tx]) => tx.startsWith(`tx-${seed}-`)).map(([, v]) => v[0]);
    for (const seed of [200, 201]) expect(new Set(byTx(seed)), `seed ${seed}`).toEqual(new Set([1]));
    expect(byTx(202).filter((v) => v !== 1 && v !== 2), 'seed 202').toEqual([]);
    for (const seed of [300, 301]) expect(new Set(byTx(seed)), `seed ${seed}`).toEqual(new Set([2]));
    expect(v1Count).toBe(2_700);
  }, 300_000);
});

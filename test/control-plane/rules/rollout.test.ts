/**
 * Rules of a deployment against the real services and a real worker running the fraud job: invalid rule sets
 * refused naming field and problem; versions numbered and readable; a rollout acknowledged by every routing subtask;
 * a swap under load where every transaction is judged by exactly one version, switching once per input channel;
 * rollback to an earlier version in one call.
 */
import type { KafkaConnector } from '@weir/kafka';
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventChannel } from '../../../apps/control-plane/src/events/events';
import { produceTransactions } from '../../../apps/cli/src/generate/produce-transactions';
import type { Alert, FraudJobTopics } from '../../../examples/fraud-detection';
import { platformFixture } from '../../support/platform';
import type { Api } from '../deployments/support';
import { eventually } from '../support/control-plane';
import type { TestTenant } from '../support/tenants';
import { deployFraud, everyTx, FRAUD_PARTITIONS, FRAUD_TOPICS, ownerOf, parse, readUntil, switchMismatches, waitForRollout } from './support';

describe('rules of a deployment: versions, rollouts, acks, swap under load, rollback', () => {
  const platform = platformFixture({ name: 'rules', topics: FRAUD_TOPICS, partitions: FRAUD_PARTITIONS, workerSlots: 32 });
  const { run, config } = platform;
  let tenant: TestTenant;
  let kafka: KafkaConnector;
  let topics: FraudJobTopics;
  let client: Api;
  let deploymentId: string;
  const rulesPath = () => `/v1/deployments/${deploymentId}/rules`;

  beforeAll(async () => {
    ({ tenant, kafka, topics, client } = platform);
    deploymentId = await deployFraud(platform, 2);
  });

  it('refuses invalid rule sets with the field and the problem, and stores nothing', async () => {
    const refused = async (rule: Record<string, unknown>) => {
      const res = await client.post(rulesPath(), { rules: [rule] });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      return (res.body.errors as { name: string; reason: string }[]).map((e) => `${e.name}: ${e.reason}`);
    };
    expect(await refused({ ...everyTx(), limit: 'ten' })).toContainEqual(expect.stringMatching(/^rules\[0\]\.limit: .*number/));
    expect(await refused({ ...everyTx(), colour: 'red' })).toContainEqual(expect.stringMatching(/^rules\[0\]\.colour: /));
    expect(await refused({ ...everyTx(), comparison: '=>' })).toContainEqual(expect.stringMatching(/^rules\[0\]\.comparison: .*"=>".*>=/));
    expect(await refused({ ...everyTx(), windowMs: 3_600_000 })).toContainEqual(expect.stringMatching(/^rules\[0\]\.windowMs: .*60000/));
    expect(await refused({ ...everyTx(), groupingKeys: ['iban'] })).toContainEqual(expect.stringMatching(/^rules\[0\]\.groupingKeys\[0\]: .*iban/));
    const empty = await client.post(rulesPath(), { rules: [] });
    expect(empty.status).toBe(400);
    expect((await client.get(rulesPath())).body.items).toEqual([]);
    expect((await client.get(`/v1/deployments/d-does-not-exist/rules`)).status).toBe(404);
  });

  it('swaps v1 → v2 under load: each transaction judged by exactly one version, once per input channel; then rolls back', async () => {
    // Progress is pushed on the deployment's rollouts channel (what the ruleRollouts subscription relays).
    const progress: { phase: string; version: number; acknowledgedSubtasks: number; totalSubtasks: number }[] = [];
    const subscriber = new Redis(config.WEIR_REDIS_URL);
    subscriber.on('message', (_channel: string, message: string) => progress.push(JSON.parse(message) as (typeof progress)[number]));
    await subscriber.subscribe(eventChannel(config.WEIR_QUEUE_PREFIX, 'rollouts', tenant.tenantId, deploymentId));
    const v1 = await client.post(rulesPath(), { rules: [everyTx(1)] });
    expect(v1.status, JSON.stringify(v1.body)).toBe(201);
    expect(v1.body.version).toBe(1);
    const r1 = await waitForRollout(client, deploymentId, v1.body.rollout.id as string, 90_000);
    expect(r1.phase).toBe('ACTIVE');
    const routing = r1.subtasks.filter((s) => s.operatorId === 'route-by-rule');
    expect(routing.map((s) => [s.subtask, s.appliedVersion])).toEqual([[0, 1], [1, 1]]);
    expect(routing.every((s) => s.rulesOffset === r1.rulesOffset && r1.rulesOffset !== null)).toBe(true);
    // No transaction had reached them yet: the version applies to all of their input.
    expect(routing.map((s) => s.inputPosition)).toEqual([{}, {}]);
    await eventually('ACTIVE pushed', async () => (progress.some((m) => m.phase === 'ACTIVE') ? true : undefined), { timeoutMs: 5_000 });
    subscriber.disconnect();
    expect(progress).toContainEqual(expect.objectContaining({ phase: 'ROLLING_OUT', version: 1, acknowledgedSubtasks: 0 }));
    expect(progress.find((m) => m.phase === 'ACTIVE')).toMatchObject({
      version: 1, acknowledgedSubtasks: 2, totalSubtasks: 2,
      subtasks: [0, 1].map((subtask) => ({ operatorId: 'route-by-rule', subtask, appliedVersion: 1, inputPosition: {} })),
    });

    // Transactions flow in chunks (seeds 100, 101, …) from before v2 (same rule, limit 0: still alerts on every
    // transaction) is accepted until after every subtask acknowledged it: the swap lands inside the flow.
    let flowing = true;
    let chunks = 0;
    const flow = (async () => {
      while (flowing || chunks < 6) {
        await produceTransactions(kafka, { seed: 100 + chunks, ratePerSec: 1_500 }, { topic: topics.transactionsTopic, count: 300, partitions: 2, writerId: `rules-p1-${run}-${chunks}` });
        chunks++;
      }
    })();
    await new Promise((r) => setTimeout(r, 1_000));
    const v2 = await client.post(rulesPath(), { rules: [everyTx(0)] });
    expect(v2.status).toBe(201);
    expect(v2.body.version).toBe(2);
    const r2 = await waitForRollout(client, deploymentId, v2.body.rollout.id as string);
    const ackedAtChunk = chunks;
    flowing = false;
    await flow;
    expect(r2.phase).toBe('ACTIVE');
    expect(r2.subtasks.map((s) => s.appliedVersion)).toEqual([2, 2]);
    const part1Count = chunks * 300;
    // Sent after every subtask acknowledged v2: all judged by v2.
    await produceTransactions(kafka, { seed: 12, ratePerSec: 1_500 }, { topic: topics.transactionsTopic, count: 1_000, partitions: 2, writerId: `rules-p2-${run}` });

    // Rollback to v1 in one call: a new rollout of v1's content, acknowledged by every subtask.
    const back = await client.post(`${rulesPath()}/rollback`, { toVersion: 1 });
    expect(back.status, JSON.stringify(back.body)).toBe(201);
    expect(back.body).toMatchObject({ version: 1, kind: 'ROLLBACK' });
    const r3 = await waitForRollout(client, deploymentId, back.body.id as string);
    expect(r3.phase).toBe('ACTIVE');
    expect(r3.subtasks.map((s) => s.appliedVersion)).toEqual([1, 1]);
    await produceTransactions(kafka, { seed: 13, ratePerSec: 1_500 }, { topic: topics.transactionsTopic, count: 500, partitions: 2, writerId: `rules-p3-${run}` });
    const flush = { ts: Date.now() + 600_000, payer: 'flush', beneficiary: 'flush', card: 'flush', merchant: 'flush', amount: 1 };
    const writer = kafka.writer({ writerId: `rules-flush-${run}` });
    await writer.start();
    await writer.send([0, 1].map((partition) => ({ topic: topics.transactionsTopic, partition, value: JSON.stringify({ ...flush, txId: `flush-${partition}` }) })));
    await writer.close();

    const txId = (r: Parameters<typeof parse>[0]) => parse<{ txId: string }>(r).txId;
    const inputs = (await readUntil(kafka, topics.transactionsTopic, 2, (rs) => rs.length >= part1Count + 1_502)).filter((r) => !txId(r).startsWith('flush'));
    expect(inputs).toHaveLength(part1Count + 1_500);
    const alerts = (await readUntil(kafka, topics.alertsTopic, 2, (rs) => rs.length >= part1Count + 1_500, 1_500)).map(parse<Alert>).filter((a) => !a.txId.startsWith('flush'));
    const versionOf = new Map<string, number[]>();
    for (const a of alerts) versionOf.set(a.txId, [...(versionOf.get(a.txId) ?? []), a.ruleVersion]);
    // None lost, none judged twice.
    expect(alerts).toHaveLength(part1Count + 1_500);
    expect(inputs.every((r) => versionOf.get(txId(r))?.length === 1)).toBe(true);

    // Part 1, per input channel (source partition → routing subtask) in offset order: v1 … v1 v2 … v2.
    const history = await client.get(`/v1/deployments/${deploymentId}/history`);
    const ranges = (history.body.runs as { subtasks: { operatorId: string; subtask: number; keyGroups: number[][] }[] }[])[0].subtasks
      .filter((s) => s.operatorId === 'route-by-rule');
    const channels = new Map<string, number[]>();
    const part1Inputs = inputs.filter((r) => /^tx-1\d\d-/.test(txId(r))).sort((a, b) => a.partition - b.partition || Number(a.offset) - Number(b.offset));
    expect(part1Inputs).toHaveLength(part1Count);
    for (const r of part1Inputs) {
      const channel = `${r.partition}->${ownerOf(ranges, txId(r))}`;
      channels.set(channel, [...(channels.get(channel) ?? []), versionOf.get(txId(r))![0]]);
    }
    for (const [, versions] of channels) {
      const switchAt = versions.indexOf(2) === -1 ? versions.length : versions.indexOf(2);
      expect(versions.slice(0, switchAt).every((v) => v === 1)).toBe(true);
      expect(versions.slice(switchAt).every((v) => v === 2)).toBe(true);
    }
    expect([...channels.values()].flat()).toContain(1);
    // Each subtask's acknowledged input position is exactly where its channels switched.
    const judgedPart1 = part1Inputs.map((r) => ({ partition: r.partition, offset: r.offset, txId: txId(r), version: versionOf.get(txId(r))![0] }));
    const positionOf = (subtask: number) => r2.subtasks.find((s) => s.operatorId === 'route-by-rule' && s.subtask === subtask)?.inputPosition ?? null;
    expect(switchMismatches(judgedPart1, topics.transactionsTopic, ranges, positionOf, 2)).toEqual([]);
    expect([...channels.values()].flat()).toContain(2);
    // Produced after every subtask acknowledged v2 (later chunks, then seed 12): v2, up to where each subtask applied
    // the rollback — a job behind its input may route the tail of them after it, so the rollback's reported input
    // positions decide, not timing.
    const afterV2 = inputs
      .filter((r) => Number(/^tx-1(\d\d)-/.exec(txId(r))?.[1] ?? -1) > ackedAtChunk || txId(r).startsWith('tx-12-'))
      .map((r) => ({ partition: r.partition, offset: r.offset, txId: txId(r), version: versionOf.get(txId(r))![0] }));
    expect(afterV2.length).toBeGreaterThanOrEqual(1_000);
    expect(afterV2.every((j) => j.version === 1 || j.version === 2)).toBe(true);
    const rollbackPositionOf = (subtask: number) => r3.subtasks.find((s) => s.operatorId === 'route-by-rule' && s.subtask === subtask)?.inputPosition ?? null;
    expect(switchMismatches(afterV2, topics.transactionsTopic, ranges, rollbackPositionOf, 1)).toEqual([]);
    expect(inputs.filter((r) => txId(r).startsWith('tx-13-')).every((r) => versionOf.get(txId(r))![0] === 1)).toBe(true);

    // Versions are listed newest first with cursor pagination, each readable alone.
    const page1 = await client.get(`${rulesPath()}?limit=1`);
    expect(page1.body.items.map((v: { version: number }) => v.version)).toEqual([2]);
    const page2 = await client.get(`${rulesPath()}?limit=1&cursor=${page1.body.nextCursor as string}`);
    expect(page2.body.items.map((v: { version: number }) => v.version)).toEqual([1]);
    expect(page2.body.nextCursor).toBeNull();
    expect((await client.get(`${rulesPath()}/1`)).body.rules).toEqual([everyTx(1)]);
    expect((await client.get(`${rulesPath()}/9`)).status).toBe(404);
  }, 150_000);

  it('evaluates a version in shadow beside the active one: its alerts reported, not emitted', async () => {
    // Active: v1 (rolled back above). Shadow: v2, which alerts on every transaction as well.
    const shadow = await client.post(`${rulesPath()}/2/shadow`, {});
    expect(shadow.status, JSON.stringify(shadow.body)).toBe(201);
    expect(shadow.body).toMatchObject({ version: 2, kind: 'SHADOW' });
    const rs = await waitForRollout(client, deploymentId, shadow.body.id as string);
    expect(rs.phase).toBe('ACTIVE');
    expect(rs.subtasks.map((s) => s.appliedVersion)).toEqual([2, 2]);

    await produceTransactions(kafka, { seed: 14, ratePerSec: 1_500 }, { topic: topics.transactionsTopic, count: 300, partitions: 2, writerId: `rules-p4-${run}` });
    const isShadowed = (a: Alert) => a.txId.startsWith('tx-14-');
    const live = (await readUntil(kafka, topics.alertsTopic, 2, (rs) => rs.map(parse<Alert>).filter(isShadowed).length >= 300, 1_000)).map(parse<Alert>).filter(isShadowed);
    expect(live).toHaveLength(300);
    expect(live.every((a) => a.ruleVersion === 1)).toBe(true);

    const results = await eventuallyResults(300);
    expect(results.alertsByRule).toEqual({ 'every-tx': 300 });
    expect(results.totalAlerts).toBe(300);
    expect(results.alerts).toHaveLength(50);
    expect(results.alerts.every((a: Alert) => a.ruleVersion === 2 && isShadowed(a))).toBe(true);
    expect(results.truncated).toBe(false);
    // v1 was never shadowed: nothing to report.
    expect((await client.get(`${rulesPath()}/1/shadow-results`)).body.totalAlerts).toBe(0);
  }, 120_000);

  async function eventuallyResults(count: number) {
    let last: Record<string, any> | undefined; // eslint-disable-line @typescript-eslint/no-explicit-any
    for (let i = 0; i < 40; i++) {
      last = (await client.get(`${rulesPath()}/2/shadow-results`)).body;
      if (last.totalAlerts >= count) return last;
      await new Promise((r) => setTimeout(r, 250));
    }
    return last!;
  }
});


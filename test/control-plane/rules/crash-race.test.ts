/**
 * A rule rollout racing a worker crash: v2 is accepted while transactions flow and the worker running the fraud job
 * is killed (SIGKILL, no goodbye) before or while its subtasks apply it; the deployment recovers on another worker
 * from its latest checkpoint. The job's alerts go through the exactly-once sink, so what a reader sees is one
 * history: the checkpointed part of the first run, then the recovered run. The check is exact: every transaction
 * judged once, per input channel (source partition → routing subtask) by v1 then v2 (one switch), and every alert —
 * aggregate included — equal to an independent reference evaluator's given the version that judged each transaction.
 * v2 groups by card where v1 groups by payer, so its windows hold only what v2 routed: a judgement lost, doubled or
 * stamped with the wrong version on a neighbour changes some aggregate.
 */
import { createBlobStore } from '@weir/blob';
import { CheckpointStore } from '@weir/checkpoint';
import type { VersionedRule } from '@weir/rules';
import { afterAll, describe, expect, it } from 'vitest';
import { produceTransactions } from '../../../apps/cli/src/generate/produce-transactions';
import type { Alert, Transaction } from '../../../examples/fraud-detection';
import { referenceAlertsStamped } from '../../fraud/reference-evaluator';
import { platformFixture } from '../../support/platform';
import { waitForDeployment, waitForStatus } from '../deployments/support';
import { adminHeaders, eventually } from '../support/control-plane';
import { everyTx, FRAUD_PARTITIONS, FRAUD_TOPICS, fraudTopicsConfig, ownerOf, parse, readUntil, switchMismatches, uploadFraudBundle, waitForRollout } from './support';

const V1 = everyTx(1);
/** Alerts on every transaction too, but keyed by card: its state is its own. */
const V2 = { ...everyTx(0), groupingKeys: ['card'] };

describe('a rule rollout racing a worker crash', () => {
  const platform = platformFixture({ name: 'rules-crash', workers: 0, topics: FRAUD_TOPICS, partitions: FRAUD_PARTITIONS, workerSlots: 32 });
  const { run } = platform;
  const blob = createBlobStore(platform.config);

  afterAll(() => blob.close());

  it('ends with every subtask on the new version, one consistent judgement per transaction', async () => {
    const { client, kafka, tenant, topics } = platform;
    await uploadFraudBundle(platform.cp.url, tenant.writeKey, topics);
    const doomed = platform.spawnWorker('doomed');
    await eventually('the doomed worker registered', async () => {
      const res = await fetch(`${platform.cp.url}/v1/workers/${platform.workerId('doomed')}`, { headers: adminHeaders() });
      return res.status === 200 && ((await res.json()) as { status: string }).status === 'ALIVE' ? true : undefined;
    });
    const deploymentId = await platform.deploy({
      name: 'fraud-crash', bundle: { name: 'fraud-detection', version: '1.0.0' }, parallelism: { default: 2 },
      config: { topics: fraudTopicsConfig(topics), properties: { 'checkpoint.interval-ms': '300', 'sink.delivery': 'exactly-once' } },
    });
    await waitForStatus(client, deploymentId, 'RUNNING', 60_000);
    const rulesPath = `/v1/deployments/${deploymentId}/rules`;
    const v1 = await client.post(rulesPath, { rules: [V1] });
    expect((await waitForRollout(client, deploymentId, v1.body.rollout.id as string, 90_000)).phase).toBe('ACTIVE');
    await produceTransactions(kafka, { seed: 40, ratePerSec: 1_500 }, { topic: topics.transactionsTopic, count: 600, partitions: 2, writerId: `crash-p1-${run}` });
    // A checkpoint taken after that input was sent: the crash must be a recovery, not a fresh start (see docs/rules.md).
    const store = new CheckpointStore(blob);
    const scope = { tenantId: tenant.tenantId, jobId: deploymentId };
    const before = (await store.latest(scope))?.manifest.checkpointId ?? 0;
    await eventually('a checkpoint after the first input', async () => ((await store.latest(scope))?.manifest.checkpointId ?? 0) > before + 1 || undefined, { timeoutMs: 30_000, everyMs: 100 });

    await platform.startWorker('survivor');
    // v2 accepted while transactions flow, and the worker killed at once: the rollout, the input and the crash race.
    const racing = produceTransactions(kafka, { seed: 42, ratePerSec: 1_500 }, { topic: topics.transactionsTopic, count: 600, partitions: 2, writerId: `crash-p2-${run}` });
    await new Promise((r) => setTimeout(r, 150));
    const v2 = await client.post(rulesPath, { rules: [V2] });
    expect(v2.status).toBe(201);
    doomed.kill('SIGKILL');
    await racing;

    const recovered = await waitForDeployment(client, deploymentId, 'running again', (d) => d.status === 'RUNNING' && d.runNo >= 2, 90_000);
    expect(recovered.runNo).toBeGreaterThanOrEqual(2);
    const rollout = await waitForRollout(client, deploymentId, v2.body.rollout.id as string, 60_000);
    expect(rollout.phase).toBe('ACTIVE');
    expect(rollout.subtasks.map((s) => s.appliedVersion)).toEqual([2, 2]);

    // Sent after the recovered job acknowledged v2: judged by v2 only. Then event time is flushed so all is judged.
    await produceTransactions(kafka, { seed: 41, ratePerSec: 1_500 }, { topic: topics.transactionsTopic, count: 300, partitions: 2, writerId: `crash-p3-${run}` });
    const writer = kafka.writer({ writerId: `crash-flush-${run}` });
    await writer.start();
    const flush = { ts: Date.now() + 600_000, payer: 'flush', beneficiary: 'flush', card: 'flush', merchant: 'flush', amount: 1 };
    await writer.send([0, 1].map((partition) => ({ topic: topics.transactionsTopic, partition, value: JSON.stringify({ ...flush, txId: `flush-${partition}` }) })));
    await writer.close();

    const TOTAL = 600 + 600 + 300 + 2;
    const inputs = await readUntil(kafka, topics.transactionsTopic, 2, (rs) => rs.length >= TOTAL);
    expect(inputs).toHaveLength(TOTAL);
    const txs = inputs.map(parse<Transaction>);
    // The flush records themselves stay ahead of the watermark: never judged.
    const judged = txs.filter((tx) => !tx.txId.startsWith('flush'));
    const alerts = (await readUntil(kafka, topics.alertsTopic, 2, (rs) => rs.length >= judged.length, 2_000)).map(parse<Alert>);
    const versionsOf = new Map<string, number[]>();
    for (const a of alerts) versionsOf.set(a.txId, [...(versionsOf.get(a.txId) ?? []), a.ruleVersion]);
    const summary = () => {
      const by = new Map<string, number>();
      for (const tx of judged) {
        const k = `${tx.txId.split('-').slice(0, 2).join('-')} ${JSON.stringify(versionsOf.get(tx.txId) ?? [])}`;
        by.set(k, (by.get(k) ?? 0) + 1);
      }
      return JSON.stringify(Object.fromEntries(by));
    };
    // Judged once each: nothing lost across the crash, nothing judged twice (by one version or two).
    expect(judged.filter((tx) => versionsOf.get(tx.txId)?.length !== 1).map((tx) => tx.txId), summary()).toEqual([]);
    expect(alerts, summary()).toHaveLength(judged.length);
    const versionOf = (tx: Transaction) => versionsOf.get(tx.txId)![0];

    // Per input channel, in offset order: v1 … v1 v2 … v2 (both runs route with the same key-group ranges).
    const history = await client.get(`/v1/deployments/${deploymentId}/history`);
    const runs = history.body.runs as { subtasks: { operatorId: string; subtask: number; keyGroups: number[][] }[] }[];
    const rangesOf = (i: number) => runs[i].subtasks.filter((s) => s.operatorId === 'route-by-rule');
    expect(rangesOf(0)).toEqual(rangesOf(runs.length - 1));
    const channels = new Map<string, number[]>();
    for (const i of inputs.map((_, i) => i).filter((i) => !txs[i].txId.startsWith('flush')).sort((a, b) => inputs[a].partition - inputs[b].partition || Number(inputs[a].offset) - Number(inputs[b].offset))) {
      const channel = `${inputs[i].partition}->${ownerOf(rangesOf(0), txs[i].txId)}`;
      channels.set(channel, [...(channels.get(channel) ?? []), versionOf(txs[i])]);
    }
    for (const [channel, versions] of channels) {
      const switchAt = versions.indexOf(2) === -1 ? versions.length : versions.indexOf(2);
      expect(versions.slice(switchAt).every((v) => v === 2), `channel ${channel} goes back to v1 after v2`).toBe(true);
    }
    expect(judged.filter((tx) => tx.txId.startsWith('tx-41-')).every((tx) => versionOf(tx) === 2)).toBe(true);
    // Where each subtask says it switched (its acknowledged input position) is where it did, on every channel.
    const routed = inputs.map((r, i) => ({ partition: r.partition, offset: r.offset, txId: txs[i].txId, version: versionsOf.get(txs[i].txId)?.[0] ?? 0 }))
      .filter((j) => !j.txId.startsWith('flush'));
    const positionOf = (subtask: number) => rollout.subtasks.find((s) => s.operatorId === 'route-by-rule' && s.subtask === subtask)?.inputPosition ?? null;
    expect(switchMismatches(routed, topics.transactionsTopic, rangesOf(0), positionOf, 2)).toEqual([]);

    // Every alert as the reference computes it for that assignment of versions.
    const versions = new Map<number, VersionedRule>([[1, { ...V1, version: 1 } as VersionedRule], [2, { ...V2, version: 2 } as VersionedRule]]);
    const byId = (a: Alert, b: Alert) => (a.alertId < b.alertId ? -1 : a.alertId > b.alertId ? 1 : 0);
    expect([...alerts].sort(byId)).toEqual(referenceAlertsStamped(versions, judged, versionOf).sort(byId));
  }, 240_000);
});

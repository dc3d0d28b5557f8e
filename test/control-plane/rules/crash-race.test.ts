/**
 * A rule rollout racing a worker crash: v2 is accepted, the worker running the fraud job is killed (SIGKILL, no
 * goodbye) before or while its subtasks apply it; the deployment recovers on another worker and the rollout still
 * ends ACTIVE with every routing subtask on v2, and transactions sent afterwards are judged by v2 exactly once.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KafkaConnector } from '@weir/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerApp } from '../../../apps/worker/src/worker-app';
import { produceTransactions } from '../../../apps/cli/src/generate/produce-transactions';
import type { Alert, FraudJobTopics } from '../../../examples/fraud-detection';
import { api, deleteTopics, ensureTopics, spawnWorker, startWorker, waitForDeployment, waitForStatus, type Api } from '../deployments/support';
import { adminHeaders, deleteQueues, deleteWorkers, eventually, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';
import { everyTx, parse, readUntil, uploadFraudBundle, waitForRollout } from './support';

const run = randomBytes(3).toString('hex');

describe('a rule rollout racing a worker crash', () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: '250' });
  const workerIds = [`rules-doomed-${run}`, `rules-survivor-${run}`];
  let home: string;
  let cp: RunningControlPlane;
  let doomed: ChildProcess | undefined;
  let survivor: WorkerApp | undefined;
  let tenant: TestTenant;
  let kafka: KafkaConnector;
  let topics: FraudJobTopics;
  let client: Api;
  let deploymentId = '';

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'weir-rules-crash-'));
    tenant = await createTestTenant(config);
    const p = `t.${tenant.tenantId}.${run}.`;
    topics = {
      transactionsTopic: `${p}transactions`, rulesTopic: `${p}rules`, alertsTopic: `${p}alerts`, shadowAlertsTopic: `${p}shadow-alerts`, ruleAcksTopic: `${p}rule-acks`,
    };
    kafka = await ensureTopics(config, [topics.transactionsTopic, topics.alertsTopic, topics.shadowAlertsTopic!], 2);
    await ensureTopics(config, [topics.rulesTopic, topics.ruleAcksTopic], 1);
    cp = await startControlPlane(config);
    client = api(() => cp.url, tenant.writeKey);
    await uploadFraudBundle(cp.url, tenant.writeKey, topics);
  });

  afterAll(async () => {
    doomed?.kill('SIGKILL');
    await survivor?.stop('test finished');
    await cp?.close();
    await tenant?.cleanup();
    await deleteWorkers(config, workerIds);
    if (kafka) await deleteTopics(kafka, [...Object.values(topics ?? {}), `weir.${tenant?.tenantId}.${deploymentId}.dead-letters`]);
    await deleteQueues(config);
    await rm(home, { recursive: true, force: true });
  });

  it('ends with every subtask on the new version, and judges what follows by it', async () => {
    doomed = spawnWorker(config, workerIds[0], join(home, 'doomed'), 32);
    await eventually('the doomed worker registered', async () => {
      const res = await fetch(`${cp.url}/v1/workers/${workerIds[0]}`, { headers: adminHeaders() });
      return res.status === 200 && ((await res.json()) as { status: string }).status === 'ALIVE' ? true : undefined;
    });
    const created = await client.post('/v1/deployments', {
      name: 'fraud-crash', bundle: { name: 'fraud-detection', version: '1.0.0' }, parallelism: { default: 2 },
      config: { topics: { transactions: topics.transactionsTopic, rules: topics.rulesTopic, alerts: topics.alertsTopic, 'shadow-alerts': topics.shadowAlertsTopic!, 'rule-acks': topics.ruleAcksTopic } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    deploymentId = created.body.id as string;
    await waitForStatus(client, deploymentId, 'RUNNING', 60_000);
    const rulesPath = `/v1/deployments/${deploymentId}/rules`;
    const v1 = await client.post(rulesPath, { rules: [everyTx(1)] });
    expect((await waitForRollout(client, deploymentId, v1.body.rollout.id as string)).phase).toBe('ACTIVE');
    await produceTransactions(kafka, { seed: 40, ratePerSec: 1_500 }, { topic: topics.transactionsTopic, count: 600, partitions: 2, writerId: `crash-p1-${run}` });

    survivor = await startWorker(config, workerIds[1], join(home, 'survivor'), 32);
    const v2 = await client.post(rulesPath, { rules: [everyTx(0)] });
    expect(v2.status).toBe(201);
    doomed.kill('SIGKILL');

    const recovered = await waitForDeployment(client, deploymentId, 'running again', (d) => d.status === 'RUNNING' && d.runNo >= 2, 90_000);
    expect(recovered.runNo).toBeGreaterThanOrEqual(2);
    const rollout = await waitForRollout(client, deploymentId, v2.body.rollout.id as string, 60_000);
    expect(rollout.phase).toBe('ACTIVE');
    expect(rollout.subtasks.map((s) => s.appliedVersion)).toEqual([2, 2]);

    // Sent after the recovered job acknowledged v2: judged by v2 only, exactly once each.
    await produceTransactions(kafka, { seed: 41, ratePerSec: 1_500 }, { topic: topics.transactionsTopic, count: 300, partitions: 2, writerId: `crash-p2-${run}` });
    const writer = kafka.writer({ writerId: `crash-flush-${run}` });
    await writer.start();
    const flush = { ts: Date.now() + 600_000, payer: 'flush', beneficiary: 'flush', card: 'flush', merchant: 'flush', amount: 1 };
    await writer.send([0, 1].map((partition) => ({ topic: topics.transactionsTopic, partition, value: JSON.stringify({ ...flush, txId: `flush-${partition}` }) })));
    await writer.close();
    const after = (a: Alert) => a.txId.startsWith('tx-41-');
    const alerts = (await readUntil(kafka, topics.alertsTopic, 2, (rs) => rs.map(parse<Alert>).filter(after).length >= 300, 1_000)).map(parse<Alert>);
    const judged = alerts.filter(after);
    expect(judged).toHaveLength(300);
    expect(new Set(judged.map((a) => a.txId)).size).toBe(300);
    expect(judged.every((a) => a.ruleVersion === 2)).toBe(true);
  }, 240_000);
});

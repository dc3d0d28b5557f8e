/**
 * A control plane that starts resumes collecting the acks of rollouts still in progress, without anyone reading
 * them: the instance that published a version is gone before any ack came, the acks arrive, and the next instance
 * finishes the rollout on its own (pushed on the rollouts channel), with each subtask's input position. No worker:
 * the acks are written as the fraud job writes them.
 */
import { randomBytes } from 'node:crypto';
import type { KafkaConnector } from '@weir/kafka';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventChannel } from '../../../apps/control-plane/src/events/events';
import type { FraudJobTopics, RuleAck } from '../../../examples/fraud-detection';
import { api, deleteTopics, ensureTopics } from '../deployments/support';
import { deleteQueues, eventually, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';
import { everyTx, readUntil, uploadFraudBundle, type RolloutBody } from './support';

const run = randomBytes(3).toString('hex');

describe('rule acks collected after a control-plane restart', () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });
  let cp: RunningControlPlane | undefined;
  let tenant: TestTenant;
  let kafka: KafkaConnector;
  let topics: FraudJobTopics;

  beforeAll(async () => {
    tenant = await createTestTenant(config);
    const p = `t.${tenant.tenantId}.${run}.`;
    topics = {
      transactionsTopic: `${p}transactions`, rulesTopic: `${p}rules`, alertsTopic: `${p}alerts`, shadowAlertsTopic: `${p}shadow-alerts`, ruleAcksTopic: `${p}rule-acks`,
    };
    kafka = await ensureTopics(config, [topics.rulesTopic, topics.ruleAcksTopic], 1);
  });

  afterAll(async () => {
    await cp?.close();
    await tenant?.cleanup();
    if (kafka) await deleteTopics(kafka, Object.values(topics));
    await deleteQueues(config);
  });

  it('resumes at start-up and finishes the rollout with the acks that came meanwhile', async () => {
    cp = await startControlPlane(config);
    const client = api(() => cp!.url, tenant.writeKey);
    await uploadFraudBundle(cp.url, tenant.writeKey, topics);
    const created = await client.post('/v1/deployments', {
      name: 'fraud-resume', bundle: { name: 'fraud-detection', version: '1.0.0' }, parallelism: { default: 1 },
      config: { topics: { transactions: topics.transactionsTopic, rules: topics.rulesTopic, alerts: topics.alertsTopic, 'shadow-alerts': topics.shadowAlertsTopic!, 'rule-acks': topics.ruleAcksTopic } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const deploymentId = created.body.id as string;
    // No worker: the deployment waits for one; its rules are published all the same.
    const v1 = await client.post(`/v1/deployments/${deploymentId}/rules`, { rules: [everyTx(1)] });
    expect(v1.status, JSON.stringify(v1.body)).toBe(201);
    const rolloutId = v1.body.rollout.id as string;
    await cp.close();
    cp = undefined;

    // The job's ack, written while no control plane runs.
    const [record] = await readUntil(kafka, topics.rulesTopic, 1, (rs) => rs.length >= 1);
    const ack: RuleAck = {
      type: 'ack', outcome: 'applied', ruleId: 'every-tx', ruleVersion: 1, state: 'ACTIVE', tenantId: tenant.tenantId, jobId: deploymentId,
      operatorId: 'route-by-rule', subtask: 0, parallelism: 1, ts: record.timestamp, inputPosition: { [`${topics.transactionsTopic}:0`]: '42' },
    };
    const writer = kafka.writer({ writerId: `resume-${run}` });
    await writer.start();
    await writer.send([{ topic: topics.ruleAcksTopic, key: 'every-tx', value: JSON.stringify(ack) }]);
    await writer.close();

    const pushed: { ruleSetId: string; phase: string }[] = [];
    const subscriber = new Redis(config.WEIR_REDIS_URL);
    subscriber.on('message', (_channel: string, message: string) => pushed.push(JSON.parse(message) as (typeof pushed)[number]));
    await subscriber.subscribe(eventChannel(config.WEIR_QUEUE_PREFIX, 'rollouts', tenant.tenantId, deploymentId));
    try {
      cp = await startControlPlane(config);
      // Nobody reads the rollout: only the start-up resume can finish it.
      await eventually('ACTIVE pushed', async () => (pushed.some((m) => m.ruleSetId === rolloutId && m.phase === 'ACTIVE') ? true : undefined), { timeoutMs: 30_000 });
    } finally {
      subscriber.disconnect();
    }
    const rollout = (await api(() => cp!.url, tenant.writeKey).get(`/v1/deployments/${deploymentId}/rules/rollouts/${rolloutId}`)).body as RolloutBody;
    expect(rollout.phase).toBe('ACTIVE');
    expect(rollout.subtasks).toMatchObject([{ operatorId: 'route-by-rule', subtask: 0, appliedVersion: 1, inputPosition: { [`${topics.transactionsTopic}:0`]: '42' } }]);
  }, 90_000);
});

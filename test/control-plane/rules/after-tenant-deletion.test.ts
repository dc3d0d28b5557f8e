/**
 * Rules publish for every tenant after another tenant is deleted. The control plane keeps one Kafka writer for
 * every tenant's rules topics; deleting a tenant deletes its topics, and kafkajs went on asking for them on every
 * metadata refresh, so every later publish, of any tenant, answered 503 until a restart (issue 13). Real control
 * plane, Postgres and Kafka; no worker is needed to publish.
 */
import { randomBytes } from 'node:crypto';
import { createPool, withTenant } from '@weir/db';
import { createKafkaConnector } from '@weir/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertDeployment } from '../graphql/support';
import { adminHeaders, deleteQueues, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';

describe('rules after a tenant is deleted', () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });
  let cp: RunningControlPlane;
  let doomed: TestTenant;
  let kept: TestTenant;
  const doomedDeployment = `d${randomBytes(10).toString('hex')}`;
  const keptDeployment = `d${randomBytes(10).toString('hex')}`;

  const publish = (tenant: TestTenant, deploymentId: string, path = 'rules', body: unknown = { rules: [{ ruleId: 'r1', state: 'ACTIVE' }] }) =>
    fetch(`${cp.url}/v1/deployments/${deploymentId}/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.writeKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  /** A deployment that has never run, so the tenant may be deleted (a resting status, not desired RUNNING). */
  async function stoppedDeployment(tenantId: string, id: string): Promise<void> {
    await insertDeployment(config, tenantId, id);
    const pool = createPool({ connectionString: config.WEIR_PG_URL, max: 1 });
    try {
      await withTenant(pool, tenantId, (c) => c.query(`UPDATE deployments SET status = 'SUSPENDED' WHERE id = $1`, [id]));
    } finally {
      await pool.end();
    }
  }

  beforeAll(async () => {
    cp = await startControlPlane(config);
    [doomed, kept] = await Promise.all([createTestTenant(config), createTestTenant(config)]);
    await Promise.all([stoppedDeployment(doomed.tenantId, doomedDeployment), stoppedDeployment(kept.tenantId, keptDeployment)]);
  });

  afterAll(async () => {
    await cp?.close();
    await Promise.allSettled([kept?.cleanup(), doomed?.cleanup()]);
    const admin = createKafkaConnector({ brokers: config.WEIR_KAFKA_BROKERS, clientId: 'weir-test' }).admin();
    const mine = (await admin.listTopics()).filter((t) => t.startsWith(`t.${kept?.tenantId}.`) || t.startsWith(`t.${doomed?.tenantId}.`));
    await admin.deleteTopics(mine);
    await admin.close();
    await deleteQueues(config);
  });

  it("publishes another tenant's rules (201) once a tenant whose rules topics the writer used is deleted", async () => {
    expect((await publish(doomed, doomedDeployment)).status).toBe(201);
    const deleted = await fetch(`${cp.url}/v1/tenants/${doomed.tenantId}`, { method: 'DELETE', headers: adminHeaders() });
    expect(deleted.status, await deleted.text()).toBe(204);

    // The kept tenant's topics are new to the writer: the metadata refresh they need named the deleted ones too.
    const first = await publish(kept, keptDeployment);
    expect(first.status, await first.clone().text()).toBe(201);
    expect(((await first.json()) as { version: number }).version).toBe(1);
    const second = await publish(kept, keptDeployment, 'rules', { rules: [{ ruleId: 'r1', state: 'PAUSED' }] });
    expect(second.status, await second.clone().text()).toBe(201);
    const rollback = await publish(kept, keptDeployment, 'rules/rollback', { toVersion: 1 });
    expect(rollback.status, await rollback.clone().text()).toBe(201);
  });
});

import { randomBytes } from 'node:crypto';
import { createWorkerReporter, type WorkerReporter } from '@weir/protocol';
import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventPublisher } from '../../../apps/control-plane/src/events/events';
import { MAX_SUBSCRIPTIONS_PER_CONNECTION, WS_UNAUTHORIZED } from '../../../apps/control-plane/src/graphql/graphql.module';
import { RedisPubSub } from '../../../apps/control-plane/src/events/redis-pubsub';
import { adminHeaders, deleteQueues, deleteWorkers, eventually, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';
import { collect, connectWs, deleteEventKeys, insertDeployment, snapshotOf, type WsConnection } from './support';

const METRICS = `subscription ($id: ID!) {
  deploymentMetrics(deploymentId: $id) {
    deploymentId at subtasks recordsInPerSec recordsOutPerSec
    busyMsPerSec { max mean } backpressuredMsPerSec { max mean }
    eventTimeLatency { samples p50 p95 p99 max } watermarkLagMs heavyKeys { key keyGroup count } deadLettered
  }
}`;

interface MetricsItem {
  deploymentMetrics: {
    deploymentId: string;
    subtasks: number;
    recordsInPerSec: number;
    recordsOutPerSec: number;
    busyMsPerSec: { max: number; mean: number };
    eventTimeLatency: { samples: number; p50: number; p99: number; max: number };
    watermarkLagMs: number | null;
    heavyKeys: { key: string; keyGroup: number; count: number }[];
  };
}

const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: '200' });
const workerId = `graphql-worker-${randomBytes(3).toString('hex')}`;
let one: RunningControlPlane;
let two: RunningControlPlane;
let tenantA: TestTenant;
let tenantB: TestTenant;
let reporter: WorkerReporter;
const deploymentA = `dep-a-${randomBytes(4).toString('hex')}`;
const deploymentB = `dep-b-${randomBytes(4).toString('hex')}`;
const connections: WsConnection[] = [];

beforeAll(async () => {
  [one, two] = await Promise.all([startControlPlane(config), startControlPlane(config)]);
  [tenantA, tenantB] = await Promise.all([createTestTenant(config), createTestTenant(config)]);
  await insertDeployment(config, tenantA.tenantId, deploymentA);
  await insertDeployment(config, tenantB.tenantId, deploymentB);
  // A worker running tenant A's deployment (jobId = deployment id), two subtasks, fresh snapshots at every beat.
  reporter = createWorkerReporter(config, { workerId, slots: 4, version: 'test' }, {
    status: () => {
      const metrics: SubtaskMetricsSnapshot[] = [0, 1].map((subtask) =>
        snapshotOf(tenantA.tenantId, deploymentA, { subtask, busyMsPerSec: 300 + 200 * subtask, latenciesMs: [10, 20, 30, 40, 400] }),
      );
      return {
        runningSubtasks: metrics.map((m) => ({ tenantId: m.tenantId, jobId: m.jobId, operatorId: m.operatorId, subtask: m.subtask, state: 'RUNNING' as const })),
        metrics,
      };
    },
  });
});

afterAll(async () => {
  for (const c of connections) await c.client.dispose();
  await reporter?.stop('test done');
  await Promise.allSettled([one?.close(), two?.close()]);
  await Promise.allSettled([tenantA?.cleanup(), tenantB?.cleanup()]);
  await deleteWorkers(config, [workerId]);
  await deleteQueues(config);
  await deleteEventKeys(config);
});

function connect(app: RunningControlPlane, authorization: string | undefined): WsConnection {
  const connection = connectWs(app.url, authorization);
  connections.push(connection);
  return connection;
}

describe('GraphQL subscriptions over graphql-ws', () => {
  it('rejects a connection without a valid API key at connection_init', async () => {
    const missing = connect(one, undefined);
    const invalid = connect(one, 'Bearer weir_0123456789abcdef01234567_notthesecret');
    const garbage = connect(two, 'Bearer nonsense');
    expect(await missing.closed).toBe(WS_UNAUTHORIZED);
    expect(await invalid.closed).toBe(WS_UNAUTHORIZED);
    expect(await garbage.closed).toBe(WS_UNAUTHORIZED);
  });

  it("delivers a deployment's metrics from worker heartbeats to subscribers on both instances, and nothing to another tenant", async () => {
    const onOne = connect(one, `Bearer ${tenantA.readKey}`);
    const onTwo = connect(two, tenantA.writeKey); // a bare key is accepted over ws too
    const intruder = connect(two, `Bearer ${tenantB.readKey}`);
    await Promise.all([onOne.connected, onTwo.connected, intruder.connected]);

    const first = collect<MetricsItem>(onOne.client, METRICS, { id: deploymentA });
    const second = collect<MetricsItem>(onTwo.client, METRICS, { id: deploymentA });
    const guessed = collect<MetricsItem>(intruder.client, METRICS, { id: deploymentA });
    const own = collect<MetricsItem>(intruder.client, METRICS, { id: deploymentB });

    await reporter.start();
    const [a, b] = await Promise.all([first.next(), second.next()]);
    for (const item of [a, b]) {
      const m = item.deploymentMetrics;
      expect(m.deploymentId).toBe(deploymentA);
      expect(m.subtasks).toBe(2);
      expect(m.recordsInPerSec).toBe(2000);
      expect(m.recordsOutPerSec).toBe(1800);
      expect(m.busyMsPerSec).toEqual({ max: 500, mean: 400 });
      // Two subtasks' histograms merged: 10 samples, p50 of [10,10,20,20,30,30,40,40,400,400] is 30 ms.
      expect(m.eventTimeLatency.samples).toBe(10);
      expect(m.eventTimeLatency.p50).toBeCloseTo(30, 0);
      expect(m.eventTimeLatency.max).toBeCloseTo(400, 0);
      expect(m.watermarkLagMs).toBe(250);
      expect(m.heavyKeys[0]).toMatchObject({ key: 'user-1', keyGroup: 3 });
    }
    // More updates keep flowing to both instances' subscribers.
    await Promise.all([first.next(), second.next()]);

    // Either instance's /metrics renders the fleet's live snapshots (from Redis), labelled by ids only.
    const scraped = await (await fetch(`${one.url}/metrics`, { headers: adminHeaders() })).text();
    expect(scraped).toContain(`weir_records_in_per_second{tenant="${tenantA.tenantId}",job="${deploymentA}",operator="window",subtask="1"} 1000`);
    expect(scraped).not.toContain('user-1');

    // Tenant B guessing A's deployment id is told it does not exist, and its own deployment got none of A's data.
    await eventually('the guessed subscription to be refused', async () => (guessed.errors.length ? true : undefined));
    expect(JSON.stringify(guessed.errors)).toContain('NOT_FOUND');
    expect(guessed.items).toEqual([]);
    expect(own.items).toEqual([]);
    expect(own.errors).toEqual([]);
  });

  it('pushes status changes published on one instance to subscribers of another', async () => {
    const conn = connect(two, `Bearer ${tenantA.readKey}`);
    await conn.connected;
    const status = collect<{ deploymentStatus: { deploymentId: string; status: string; previousStatus: string | null; reason: string; at: string } }>(
      conn.client,
      'subscription ($id: ID!) { deploymentStatus(deploymentId: $id) { deploymentId status previousStatus desiredState reason at } }',
      { id: deploymentA },
    );
    const publisher = one.app.get(EventPublisher);
    const at = Date.now();
    // Published until the subscription is live (pub/sub keeps no history).
    const first = status.next();
    let received = false;
    void first.then(() => (received = true));
    while (!received) {
      await publisher.deploymentStatus(tenantA.tenantId, { deploymentId: deploymentA, status: 'RUNNING', previousStatus: 'STARTING', desiredState: 'RUNNING', reason: 'all subtasks running', at });
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await first).deploymentStatus).toEqual({
      deploymentId: deploymentA,
      status: 'RUNNING',
      previousStatus: 'STARTING',
      desiredState: 'RUNNING',
      reason: 'all subtasks running',
      at: new Date(at).toISOString(),
    });
  });

  it('refuses more than 100 operations on one connection', async () => {
    const conn = connect(one, `Bearer ${tenantA.readKey}`);
    await conn.connected;
    const subs = Array.from({ length: MAX_SUBSCRIPTIONS_PER_CONNECTION }, () => collect(conn.client, METRICS, { id: deploymentA }));
    const pubsub = one.app.get(RedisPubSub);
    await eventually('the first hundred live', async () => (pubsub.channelCount >= 1 && subs.every((s) => s.errors.length === 0) ? true : undefined));
    const extra = collect(conn.client, METRICS, { id: deploymentA });
    await eventually('the extra one refused', async () => (extra.errors.length ? true : undefined));
    expect(JSON.stringify(extra.errors)).toContain('TOO_MANY_SUBSCRIPTIONS');
    expect(subs.every((s) => s.errors.length === 0)).toBe(true);
    for (const sub of [...subs, extra]) sub.dispose();
  });

  it('answers subscriptions with bad or foreign ids with errors, never a stack trace', async () => {
    const conn = connect(one, `Bearer ${tenantB.readKey}`);
    await conn.connected;
    for (const [query, variables, code] of [
      ['subscription ($id: ID!) { deploymentStatus(deploymentId: $id) { status } }', { id: 'bad id!' }, 'BAD_USER_INPUT'],
      ['subscription ($id: ID!) { sloStatus(sloId: $id) { state } }', { id: 'slo_nope' }, 'NOT_FOUND'],
      ['subscription ($id: ID!) { ruleRollouts(deploymentId: $id) { phase } }', { id: deploymentA }, 'NOT_FOUND'],
      ['subscription ($id: ID!) { scalingDecisions(deploymentId: $id) { kind } }', { id: deploymentA }, 'NOT_FOUND'],
    ] as const) {
      const sub = collect(conn.client, query, variables);
      await eventually(`an error for ${query}`, async () => (sub.errors.length ? true : undefined));
      const text = JSON.stringify(sub.errors);
      expect(text).toContain(code);
      expect(text).not.toMatch(/stacktrace|\bat .*\.ts:\d+/);
    }
  });
});

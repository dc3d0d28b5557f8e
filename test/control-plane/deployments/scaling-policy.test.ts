/**
 * The scaling policy against the real Postgres and Redis, with the partitioner test's set-up (a stand-in worker made of
 * the protocol running each deployment's two processes, skewed `counts` snapshots written into the metrics store):
 * the deploy-time properties as its first values; read and changed over REST and GraphQL, every change recorded with
 * who made it; 400s naming the field and its range; another tenant's deployment a 404 (and nothing through RLS); and
 * the controllers reading it at each look: a move budget and a cool-down taking effect without a redeploy, recommend
 * recording and changing nothing, off stopping decisions at the next look, the autoscaler turned on with its windows
 * and held by its bounds, and a slow move cutting the next budget.
 */
import type { MoveKeyGroups, MoveReport } from '@weir/protocol';
import { createPool, withTenant } from '@weir/db';
import { afterAll, describe, expect, it } from 'vitest';
import { MetricsStore } from '../../../apps/control-plane/src/metrics/metrics-store';
import { eventually } from '../support/control-plane';
import { createTestTenant } from '../support/tenants';
import { gql, snapshotOf } from '../graphql/support';
import { movesFixture, type MoveBody } from './moves-fixture';
import { reportOf, type ProtocolWorker } from './protocol-worker';
import { api, waitForStatus } from './support';

interface PolicyBody {
  deploymentId: string;
  partitioner: { mode: string; intervalMs: number; moveBudget: number; actAbove: number; aimBelow: number; coolDownMs: number; maxMovePauseMs: number };
  autoscaler: {
    mode: string;
    intervalMs: number;
    minParallelism: number;
    maxParallelism: number;
    targetUtilization: number;
    scaleUpWindowMs: number;
    scaleDownWindowMs: number;
    cooldownMs: number;
    catchUpMs: number;
    sloFraction: number;
  };
  source: string;
  updatedAt: string | null;
  updatedBy: string | null;
}

interface DecisionBody {
  decisionId: string;
  source: string;
  mode: string;
  kind: string;
  reason: string;
  keyGroups: number[];
  moves: { keyGroup: number }[];
  declined: { action: string; reason: string }[];
  inputs: { policy?: { moveBudget: number; coolDownMs: number }; moveCost?: { budget: number; moveBudget: number; maxMovePauseMs: number; latestMove: { moveId: string; keyGroups: number; worstPauseMs: number } | null; reason: string | null } };
  moveId: string | null;
}

/** counts at parallelism 2: key groups 0–15 on subtask 0, 16–31 on subtask 1, each subtask taking 4,000 records/s when busy all the time. */
function countsSnapshots(tenantId: string, deploymentId: string, perKeyGroup: (kg: number) => number) {
  return [0, 1].map((subtask) => {
    const keyGroupCounts: Record<number, number> = {};
    for (let kg = subtask * 16; kg < subtask * 16 + 16; kg++) keyGroupCounts[kg] = perKeyGroup(kg);
    const records = Object.values(keyGroupCounts).reduce((a, n) => a + n, 0);
    return snapshotOf(tenantId, deploymentId, { operatorId: 'counts', subtask, keyGroupCounts, recordsIn: records, recordsInPerSec: records, busyMsPerSec: records / 4 });
  });
}

describe('the scaling policy', { timeout: 180_000 }, () => {
  const f = movesFixture('pol');
  let worker: ProtocolWorker;
  const feeds: NodeJS.Timeout[] = [];
  afterAll(() => feeds.forEach(clearInterval));

  /** Subtask 0's key groups at 100 records/s each, subtask 1's at 20: subtask 0 at 1.67× its fair load. */
  const skewed = (kg: number) => (kg < 16 ? 100 : 20);
  /** Both subtasks at 400 records/s, 10% busy: one subtask would do. */
  const light = () => 25;

  function feed(deploymentId: string, perKeyGroup: (kg: number) => number = skewed): void {
    const store = f.cp.app.get(MetricsStore);
    const write = () => void store.record(countsSnapshots(f.tenant.tenantId, deploymentId, perKeyGroup), Date.now(), 10_000).catch(() => undefined);
    write();
    feeds.push(setInterval(write, 200));
  }

  async function deploy(name: string, properties: Record<string, string> = {}, extra: Record<string, unknown> = {}): Promise<string> {
    const created = await f.client.post('/v1/deployments', {
      name: `${name}-${f.run}`,
      bundleId: f.bundleId,
      parallelism: { default: 1, operators: { counts: 2 } },
      // The autoscaler is off: these tests watch the partitioner's decisions and the policy's fields.
      autoscalerMode: 'off',
      config: { properties: { 'partitioner.interval-ms': '1000', ...properties } },
      ...extra,
    });
    expect(created.status).toBe(201);
    await waitForStatus(f.client, created.body.id as string, 'RUNNING');
    return created.body.id as string;
  }

  const policyOf = async (id: string) => (await f.client.get(`/v1/deployments/${id}/scaling-policy`)).body as PolicyBody;
  const patch = (id: string, body: unknown) => f.client.call('PATCH', `/v1/deployments/${id}/scaling-policy`, body);
  const decisionsOf = async (id: string) => ((await f.client.get(`/v1/deployments/${id}/scaling-decisions`)).body as { items: DecisionBody[] }).items.filter((d) => d.source === 'partitioner');
  const movesOf = async (id: string) => ((await f.client.get(`/v1/deployments/${id}/key-group-moves`)).body as { items: MoveBody[] }).items;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it("starts from the deployment's properties, and is changed over REST with merge semantics, each change recorded", async () => {
    worker = await f.startWorker('w', 8);
    const id = await deploy('props', { 'autoscaler.target-utilization': '0.6', 'autoscaler.max-parallelism': '8', 'partitioner.interval-ms': '2000' });
    const initial = await policyOf(id);
    expect(initial).toEqual({
      deploymentId: id,
      partitioner: { mode: 'recommend', intervalMs: 2_000, moveBudget: 16, actAbove: 1.1, aimBelow: 1.05, coolDownMs: 300_000, maxMovePauseMs: 1_000 },
      autoscaler: {
        mode: 'off',
        intervalMs: 15_000,
        minParallelism: 1,
        maxParallelism: 8,
        targetUtilization: 0.6,
        scaleUpWindowMs: 60_000,
        scaleDownWindowMs: 600_000,
        cooldownMs: 300_000,
        catchUpMs: 300_000,
        sloFraction: 0.8,
      },
      source: 'properties',
      updatedAt: null,
      updatedBy: null,
    });

    const changed = await patch(id, { autoscaler: { targetUtilization: 0.5, minParallelism: 2 }, partitioner: { moveBudget: 4 } });
    expect(changed.status).toBe(200);
    const after = changed.body as PolicyBody;
    expect(after).toMatchObject({ source: 'api', partitioner: { ...initial.partitioner, moveBudget: 4 }, autoscaler: { ...initial.autoscaler, targetUtilization: 0.5, minParallelism: 2 } });
    expect(after.updatedBy).toMatch(/^\S+$/);
    expect(Date.parse(after.updatedAt!)).toBeGreaterThan(Date.now() - 60_000);
    expect(await policyOf(id)).toEqual(after);

    // The deployment's own PATCH changes the modes through the same path: recorded too, nothing else moves.
    const deployment = await f.client.patch(`/v1/deployments/${id}`, { autoscalerMode: 'recommend' });
    expect(deployment.status).toBe(200);
    expect((await policyOf(id)).autoscaler).toEqual({ ...after.autoscaler, mode: 'recommend' });
    // A change that changes nothing records nothing.
    expect((await patch(id, { partitioner: { moveBudget: 4 } })).status).toBe(200);

    const changes = (await f.client.get(`/v1/deployments/${id}/scaling-policy/changes`)).body as {
      items: { changeId: string; changedBy: string; changedAt: string; fields: string[]; from: PolicyBody; to: PolicyBody }[];
      nextCursor: string | null;
    };
    expect(changes.items.map((c) => c.fields)).toEqual([['autoscaler.mode'], ['partitioner.moveBudget', 'autoscaler.targetUtilization', 'autoscaler.minParallelism']]);
    expect(changes.items[1]).toMatchObject({ changedBy: after.updatedBy, from: { partitioner: { moveBudget: 16 }, autoscaler: { targetUtilization: 0.6 } }, to: { partitioner: { moveBudget: 4 }, autoscaler: { targetUtilization: 0.5 } } });
    expect(changes.items[0]).toMatchObject({ from: { autoscaler: { mode: 'off' } }, to: { autoscaler: { mode: 'recommend' } } });
    expect(changes.nextCursor).toBeNull();
  });

  it('refuses bad values with a 400 naming the field and its allowed range', async () => {
    const id = (await f.client.get('/v1/deployments')).body.items.find((d: { name: string }) => d.name === `props-${f.run}`).id as string;
    const before = await policyOf(id);
    const bad = async (body: unknown) => {
      const res = await patch(id, body);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      return (res.body.errors as { in: string; name: string; reason: string }[]).map((e) => `${e.in} ${e.name}: ${e.reason}`);
    };
    expect(await bad({ autoscaler: { targetUtilization: 1.5 } })).toEqual(['body autoscaler.targetUtilization: must be a number in [0.1, 0.95]']);
    expect(await bad({ partitioner: { mode: 'sometimes', intervalMs: 10 } })).toEqual([
      'body partitioner.mode: must be one of off, recommend, auto',
      'body partitioner.intervalMs: must be an integer in [1000, 3600000]',
    ]);
    // Against the bundle (32 key groups) and across fields, on the merged policy.
    expect(await bad({ autoscaler: { maxParallelism: 64 } })).toEqual(["body autoscaler.maxParallelism: must be an integer in [1, 32] (the bundle's maxParallelism is 32), not 64"]);
    expect(await bad({ partitioner: { moveBudget: 33 } })).toEqual(["body partitioner.moveBudget: must be an integer in [1, 32] (the bundle's maxParallelism is 32), not 33"]);
    expect(await bad({ autoscaler: { maxParallelism: 1 } })).toEqual(['body autoscaler.minParallelism: must not exceed autoscaler.maxParallelism (1)']);
    expect(await bad({ partitioner: { aimBelow: 1.2 } })).toEqual(['body partitioner.aimBelow: must not exceed partitioner.actAbove (1.1): the band is aimBelow ≤ imbalance ≤ actAbove']);
    expect(await bad({ partitioner: { splitFill: 0.9, moveBudget: 2 } })).toEqual(['body partitioner.splitFill: is not a recognised parameter']);
    expect(await bad({})).toEqual(['body partitioner: give at least one field of partitioner or autoscaler']);
    expect(await bad('off')).toEqual(['body (root): must be a JSON object: { partitioner?, autoscaler? }']);
    expect(await policyOf(id)).toEqual(before);

    // A read key reads it and may not change it.
    const reader = api(() => f.cp.url, f.tenant.readKey);
    expect((await reader.get(`/v1/deployments/${id}/scaling-policy`)).status).toBe(200);
    expect((await reader.call('PATCH', `/v1/deployments/${id}/scaling-policy`, { partitioner: { moveBudget: 2 } })).status).toBe(403);
  });

  it('is a field of Deployment over GraphQL with a mutation to set it, validated as REST is', async () => {
    const id = (await f.client.get('/v1/deployments')).body.items.find((d: { name: string }) => d.name === `props-${f.run}`).id as string;
    const read = await gql<{ deployment: { scalingPolicy: { source: string; partitioner: { moveBudget: number; mode: string }; autoscaler: { targetUtilization: number } }; scalingPolicyChanges: { items: { fields: string[] }[] } } }>(
      f.cp.url,
      f.tenant.readKey,
      'query ($id: ID!) { deployment(id: $id) { scalingPolicy { source partitioner { mode moveBudget } autoscaler { targetUtilization } } scalingPolicyChanges { items { fields } } } }',
      { id },
    );
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data?.deployment.scalingPolicy).toEqual({ source: 'api', partitioner: { mode: 'recommend', moveBudget: 4 }, autoscaler: { targetUtilization: 0.5 } });
    expect(read.body.data?.deployment.scalingPolicyChanges.items).toHaveLength(2);

    const mutation = 'mutation ($id: ID!, $policy: ScalingPolicyInput!) { setDeploymentScalingPolicy(id: $id, policy: $policy) { partitioner { moveBudget coolDownMs } autoscaler { mode cooldownMs } updatedBy } }';
    const set = await gql<{ setDeploymentScalingPolicy: { partitioner: { moveBudget: number; coolDownMs: number }; autoscaler: { mode: string; cooldownMs: number }; updatedBy: string } }>(
      f.cp.url,
      f.tenant.writeKey,
      mutation,
      { id, policy: { partitioner: { moveBudget: 6, coolDownMs: null }, autoscaler: { mode: 'off', cooldownMs: 1000 } } },
    );
    expect(set.body.errors).toBeUndefined();
    expect(set.body.data?.setDeploymentScalingPolicy).toMatchObject({ partitioner: { moveBudget: 6, coolDownMs: 300_000 }, autoscaler: { mode: 'off', cooldownMs: 1000 } });
    expect((await policyOf(id)).partitioner.moveBudget).toBe(6);

    const bad = await gql(f.cp.url, f.tenant.writeKey, mutation, { id, policy: { autoscaler: { maxParallelism: 64 } } });
    expect(bad.body.errors?.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT']);
    expect(JSON.stringify(bad.body.errors?.[0].extensions?.errors)).toContain('autoscaler.maxParallelism');
    expect(JSON.stringify(bad.body)).not.toMatch(/stacktrace|\.ts:\d+/);
    const readOnly = await gql(f.cp.url, f.tenant.readKey, mutation, { id, policy: { partitioner: { moveBudget: 2 } } });
    expect(readOnly.body.errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);
  });

  it('reaches the partitioner at its next look: a budget and a cool-down without a redeploy; recommend records and changes nothing; off stops it', async () => {
    const id = await deploy('recommend');
    feed(id);
    // The defaults first: one recommendation, several key groups, recorded once per cool-down (5 min).
    const first = await eventually('a recommendation', async () => (await decisionsOf(id))[0]);
    expect(first).toMatchObject({ mode: 'recommend', kind: 'MOVE_KEY_GROUPS', moveId: null });
    expect(first.moves.length).toBeGreaterThan(2);
    expect(first.inputs.policy).toMatchObject({ moveBudget: 16, coolDownMs: 300_000 });

    // Two key groups a look and no cool-down between repeats: the next look plans within it, and repeats it.
    expect((await patch(id, { partitioner: { moveBudget: 2, coolDownMs: 0 } })).status).toBe(200);
    const budgeted = await eventually('a decision within the new budget', async () => (await decisionsOf(id)).find((d) => d.inputs.policy?.moveBudget === 2));
    expect(budgeted.moves).toHaveLength(2);
    expect(budgeted.declined.map((d) => d.reason)).toContain('budget');
    expect(budgeted.inputs.moveCost).toMatchObject({ budget: 2, moveBudget: 2, latestMove: null, reason: null });
    await eventually('repeats without a cool-down', async () => ((await decisionsOf(id)).filter((d) => d.inputs.policy?.moveBudget === 2).length >= 3 ? true : undefined));
    // Recommend changed nothing: no move, the run as it was.
    expect(await movesOf(id)).toEqual([]);

    // Off: the next look does not happen. A look in progress holds the row, so the change lands after it.
    expect((await patch(id, { partitioner: { mode: 'off' } })).status).toBe(200);
    expect((await f.client.get(`/v1/deployments/${id}`)).body.partitionerMode).toBe('off');
    const count = (await decisionsOf(id)).length;
    await sleep(3_000);
    expect(await decisionsOf(id)).toHaveLength(count);
    expect(await movesOf(id)).toEqual([]);
  });

  it('reaches the autoscaler at its next look: turned on with its windows over the API, its decision decided under the new policy', async () => {
    const id = await deploy('autoscaler');
    feed(id, light);
    // Off at deploy time: nothing from it while the load (10% of what two subtasks can take) runs.
    await sleep(2_000);
    const autoscalerDecisions = async () => ((await f.client.get(`/v1/deployments/${id}/scaling-decisions`)).body as { items: (DecisionBody & { fromParallelism: number; toParallelism: number; inputs: { policy: Record<string, number> } })[] }).items.filter((d) => d.source === 'autoscaler');
    expect(await autoscalerDecisions()).toEqual([]);
    const on = await patch(id, { autoscaler: { mode: 'recommend', intervalMs: 1_000, scaleDownWindowMs: 0, cooldownMs: 0 } });
    expect(on.status).toBe(200);
    const decision = await eventually('a recommendation', async () => (await autoscalerDecisions())[0], { timeoutMs: 20_000, everyMs: 250 });
    expect(decision).toMatchObject({ mode: 'recommend', kind: 'SCALE_DOWN', fromParallelism: 2, toParallelism: 1 });
    expect(decision.inputs.policy).toMatchObject({ intervalMs: 1_000, scaleDownWindowMs: 0, cooldownMs: 0, minParallelism: 1 });
    // Recommend changed nothing.
    expect((await f.client.get(`/v1/deployments/${id}`)).body).toMatchObject({ pendingParallelism: null, status: 'RUNNING' });
    // Its bound raised to the run's width: no step down is left to recommend, so nothing more is decided.
    expect((await patch(id, { autoscaler: { minParallelism: 2 } })).status).toBe(200);
    await sleep(3_000);
    expect((await autoscalerDecisions()).map((d) => d.decisionId)).toEqual([decision.decisionId]);
  });

  it("feeds each move's measured pause back: after a slow move the next look moves fewer key groups, and says why", async () => {
    // Every key group of a move waited 3 s: over the 1 s allowed.
    worker.onMove = async (command: MoveKeyGroups): Promise<MoveReport> => {
      const report = reportOf(command);
      return { ...report, moved: report.moved.map((m) => ({ ...m, pauseMs: 3_000 })) };
    };
    try {
      const id = await deploy('cost', {}, { partitionerMode: 'auto' });
      expect((await patch(id, { partitioner: { moveBudget: 4, maxMovePauseMs: 1_000 } })).status).toBe(200);
      feed(id);
      const first = await eventually('the first move', async () => (await decisionsOf(id)).find((d) => d.moveId !== null));
      expect(first.keyGroups).toHaveLength(4);
      expect(first.inputs.moveCost).toMatchObject({ budget: 4, latestMove: null });
      await f.waitForMove(id, first.moveId!, (m) => m.state === 'DONE', 'DONE');
      // The load model still sees subtask 0 above its share (its snapshots are as before): the next look carries on.
      const next = await eventually('a decision after the slow move', async () => (await decisionsOf(id)).find((d) => d.decisionId !== first.decisionId && d.inputs.moveCost?.latestMove));
      expect(next.inputs.moveCost).toMatchObject({ budget: 1, moveBudget: 4, maxMovePauseMs: 1_000, latestMove: { moveId: first.moveId, keyGroups: 4, worstPauseMs: 3_000 } });
      expect(next.keyGroups).toHaveLength(1);
      expect(next.reason).toContain(`move budget 1 of 4 key groups: move ${first.moveId} paused up to 3000 ms over 4 key groups, above the 1000 ms allowed`);
    } finally {
      worker.onMove = async (c) => reportOf(c);
    }
  });

  it("another tenant's deployment is a 404, and row-level security shows it nothing", async () => {
    const id = (await f.client.get('/v1/deployments')).body.items.find((d: { name: string }) => d.name === `props-${f.run}`).id as string;
    const other = await createTestTenant(f.config);
    try {
      const theirs = api(() => f.cp.url, other.writeKey);
      const got = await theirs.get(`/v1/deployments/${id}/scaling-policy`);
      expect(got.status).toBe(404);
      expect(JSON.stringify(got.body)).not.toContain('moveBudget');
      expect((await theirs.call('PATCH', `/v1/deployments/${id}/scaling-policy`, { partitioner: { mode: 'off' } })).status).toBe(404);
      expect((await theirs.get(`/v1/deployments/${id}/scaling-policy/changes`)).status).toBe(404);
      const foreign = await gql(f.cp.url, other.writeKey, 'mutation ($id: ID!) { setDeploymentScalingPolicy(id: $id, policy: { partitioner: { mode: off } }) { source } }', { id });
      expect(foreign.body.errors?.map((e) => e.extensions?.code)).toEqual(['NOT_FOUND']);
      expect((await policyOf(id)).partitioner.mode).toBe('recommend');
      const pool = createPool({ connectionString: f.config.WEIR_PG_URL, max: 1 });
      try {
        const count = (tenantId: string, table: string) =>
          withTenant(pool, tenantId, async (client) => (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE deployment_id = $1`, [id])).rows[0].n);
        expect(await count(other.tenantId, 'deployment_scaling_policies')).toBe(0);
        expect(await count(other.tenantId, 'deployment_scaling_policy_changes')).toBe(0);
        expect(await count(f.tenant.tenantId, 'deployment_scaling_policies')).toBe(1);
        expect(await count(f.tenant.tenantId, 'deployment_scaling_policy_changes')).toBe(3);
      } finally {
        await pool.end();
      }
    } finally {
      await other.cleanup();
    }
  });
});

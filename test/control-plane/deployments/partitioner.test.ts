/**
 * The partitioner's controller against the real Postgres and Redis, with a stand-in worker made of the protocol
 * (ProtocolWorker) running each deployment's two processes and snapshots written into the metrics store as the
 * heartbeat path writes them: a skewed `counts` in mode auto → a decision recorded, pushed on scalingDecisions, and a
 * key-group move recorded PENDING with the planned moves (then DONE, and nothing moves again); in mode recommend
 * (the default) → the decision only; a balanced load → nothing; another tenant reads none of it.
 */
import type { MoveKeyGroups, MoveReport } from '@weir/protocol';
import { createPool, withTenant } from '@weir/db';
import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisPubSub } from '../../../apps/control-plane/src/events/redis-pubsub';
import { MetricsStore } from '../../../apps/control-plane/src/metrics/metrics-store';
import { eventually, startControlPlane } from '../support/control-plane';
import { createTestTenant } from '../support/tenants';
import { collect, connectWs, gql, snapshotOf } from '../graphql/support';
import { movesFixture, type MoveBody } from './moves-fixture';
import { reportOf, type ProtocolWorker } from './protocol-worker';
import { api, waitForStatus } from './support';

interface DecisionBody {
  decisionId: string;
  deploymentId: string;
  runNo: number;
  source: string;
  operatorId: string;
  mode: string;
  kind: string;
  reason: string;
  keyGroups: number[];
  imbalanceBefore: number;
  imbalanceAfter: number;
  detection: { overloadedSubtasks: { subtask: number; ratio: number }[]; hotKeys: { key: string; keyGroup: number }[] };
  moves: { keyGroup: number; fromSubtask: number; toSubtask: number; reason: string }[];
  declined: { action: string; reason: string }[];
  inputs: { keyGroupRates: number[]; owners: number[]; stateBytes: number[]; stateBytesSource: string };
  moveId: string | null;
  decidedAt: string;
}

/** counts at parallelism 2 owns key groups 0–15 on subtask 0 and 16–31 on subtask 1 (32 key groups, contiguous). */
function countsSnapshots(
  tenantId: string,
  deploymentId: string,
  perKeyGroup: (kg: number) => number,
  heavyKeys: SubtaskMetricsSnapshot['heavyKeys'] = [],
  /** A splittable window's subtasks report their split table (empty: none split). */
  keySplits?: SubtaskMetricsSnapshot['keySplits'],
): SubtaskMetricsSnapshot[] {
  return [0, 1].map((subtask) => {
    const keyGroupCounts: Record<number, number> = {};
    for (let kg = subtask * 16; kg < subtask * 16 + 16; kg++) keyGroupCounts[kg] = perKeyGroup(kg);
    const records = Object.values(keyGroupCounts).reduce((a, n) => a + n, 0);
    // Both subtasks process 4,000 records/s when busy all the time (equal capacities): busy time follows the load.
    return snapshotOf(tenantId, deploymentId, { operatorId: 'counts', subtask, keyGroupCounts, recordsIn: records, recordsInPerSec: records, busyMsPerSec: records / 4, heavyKeys: heavyKeys.filter((k) => k.keyGroup >= subtask * 16 && k.keyGroup < subtask * 16 + 16), ...(keySplits ? { keySplits, windows: true as const } : {}) });
  });
}

/** Subtask 0's key groups at 100 records/s each, subtask 1's at 20: subtask 0 at 1.67× its fair load. */
const skewed = (kg: number) => (kg < 16 ? 100 : 20);
const balanced = () => 50;

describe('the partitioner controller', { timeout: 120_000 }, () => {
  const f = movesFixture('ptn');
  let worker: ProtocolWorker;
  const feeds: NodeJS.Timeout[] = [];
  afterAll(() => feeds.forEach(clearInterval));

  /** Keeps the deployment's snapshots fresh in the metrics store, as its workers' heartbeats would (every 200 ms here). */
  function feed(
    deploymentId: string,
    perKeyGroup: (kg: number) => number,
    heavyKeys: SubtaskMetricsSnapshot['heavyKeys'] = [],
    keySplits?: SubtaskMetricsSnapshot['keySplits'],
  ): NodeJS.Timeout {
    const store = f.cp.app.get(MetricsStore);
    const write = () => void store.record(countsSnapshots(f.tenant.tenantId, deploymentId, perKeyGroup, heavyKeys, keySplits), Date.now(), 10_000).catch(() => undefined);
    write();
    const timer = setInterval(write, 200);
    feeds.push(timer);
    return timer;
  }

  async function deploy(name: string, extra: Record<string, unknown>): Promise<string> {
    const created = await f.client.post('/v1/deployments', {
      name: `${name}-${f.run}`,
      bundleId: f.bundleId,
      parallelism: { default: 1, operators: { counts: 2 } },
      config: { properties: { 'partitioner.interval-ms': '1000' } },
      ...extra,
    });
    expect(created.status).toBe(201);
    await waitForStatus(f.client, created.body.id as string, 'RUNNING');
    return created.body.id as string;
  }

  const decisionsOf = async (id: string) => (await f.client.get(`/v1/deployments/${id}/scaling-decisions`)).body as { items: DecisionBody[]; nextCursor: string | null };
  const movesOf = async (id: string) => ((await f.client.get(`/v1/deployments/${id}/key-group-moves`)).body as { items: MoveBody[] }).items;

  it('refuses a bad partitioner mode or interval with a 400 naming the field', async () => {
    // Its processes share one worker: still two processes, exchanging keyed records over Kafka.
    worker = await f.startWorker('w', 14);
    const bad = await f.client.post('/v1/deployments', {
      name: `bad-${f.run}`,
      bundleId: f.bundleId,
      partitionerMode: 'sometimes',
      config: { properties: { 'partitioner.interval-ms': '10' } },
    });
    expect(bad.status).toBe(400);
    expect((bad.body.errors as { name: string; reason: string }[]).map((e) => `${e.name}: ${e.reason}`)).toEqual([
      'partitionerMode: must be one of off, recommend, auto',
    ]);
    const badInterval = await f.client.post('/v1/deployments', { name: `bad-${f.run}`, bundleId: f.bundleId, config: { properties: { 'partitioner.interval-ms': '10' } } });
    expect(badInterval.status).toBe(400);
    expect(badInterval.body.errors).toEqual([
      { in: 'body', name: 'config.properties.partitioner.interval-ms', reason: 'properties.partitioner.interval-ms must be an integer in [1000, 3600000], not "10"' },
    ]);
  });

  it('in mode auto, a skewed operator gets a decision, pushed on scalingDecisions, carried out by a key-group move through the reconciler', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    worker.onMove = async (command: MoveKeyGroups): Promise<MoveReport> => {
      await held;
      return reportOf(command);
    };
    const id = await deploy('auto', { partitionerMode: 'auto' });
    expect((await f.client.get(`/v1/deployments/${id}`)).body.partitionerMode).toBe('auto');

    const conn = connectWs(f.cp.url, `Bearer ${f.tenant.readKey}`);
    await conn.connected;
    const sub = collect<{ scalingDecisions: { decisionId: string; kind: string; mode: string; moveId: string | null; keyGroups: number[]; overloadedSubtasks: { subtask: number }[] } }>(
      conn.client,
      'subscription ($id: ID!) { scalingDecisions(deploymentId: $id) { decisionId kind mode moveId keyGroups overloadedSubtasks { subtask } } }',
      { id },
    );
    try {
      await eventually('the subscription live', async () => (f.cp.app.get(RedisPubSub).channelCount >= 1 ? true : undefined));
      feed(id, skewed);
      const pushed = await sub.next();
      const page = await decisionsOf(id);
      expect(page.items).toHaveLength(1);
      const decision = page.items[0];
      expect(decision).toMatchObject({
        deploymentId: id,
        runNo: 1,
        source: 'partitioner',
        operatorId: 'counts',
        mode: 'auto',
        kind: 'MOVE_KEY_GROUPS',
        detection: { overloadedSubtasks: [{ subtask: 0 }], hotKeys: [] },
        inputs: { stateBytes: new Array(32).fill(0), owners: Array.from({ length: 32 }, (_, kg) => (kg < 16 ? 0 : 1)) },
      });
      expect(decision.decisionId).toMatch(/^s[0-9a-f]{24}$/);
      // No checkpoint on S3 (the stand-in worker takes none): state sizes unknown, every move 0 bytes.
      expect(decision.inputs.stateBytesSource).toMatch(/^unknown: no checkpoint/);
      expect(decision.imbalanceBefore).toBeCloseTo(1600 / 960, 5);
      expect(decision.imbalanceAfter).toBeLessThan(1.1);
      expect(decision.moves.length).toBeGreaterThan(0);
      expect(decision.moves.every((m) => m.fromSubtask === 0 && m.toSubtask === 1 && m.keyGroup < 16)).toBe(true);
      expect(decision.keyGroups).toEqual(decision.moves.map((m) => m.keyGroup).sort((a, b) => a - b));
      expect(decision.reason).toMatch(/^operator counts: subtask 0 at 1\.67× its fair load \(1600 of 960 records\/s\); moving \d+ key groups/);
      expect(pushed.scalingDecisions).toEqual({
        decisionId: decision.decisionId,
        kind: 'MOVE_KEY_GROUPS',
        mode: 'auto',
        moveId: decision.moveId,
        keyGroups: decision.keyGroups,
        overloadedSubtasks: [{ subtask: 0 }],
      });

      // The move: recorded PENDING by the partitioner with exactly the planned moves, sent by the reconciler.
      expect(decision.moveId).toMatch(/^m[0-9a-f]{24}$/);
      const move = await f.waitForMove(id, decision.moveId!, (m) => m.startedAt !== null, 'sent');
      expect(move).toMatchObject({
        state: 'PENDING',
        runNo: 1,
        operatorId: 'counts',
        requestedBy: 'partitioner',
        moves: decision.moves.map((m) => ({ keyGroup: m.keyGroup, fromSubtask: m.fromSubtask, toSubtask: m.toSubtask })),
      });
      expect(move.reason).toContain(`partitioner decision ${decision.decisionId}`);
      expect(worker.commands('move-key-groups', id).map((c) => c.moveId)).toEqual([decision.moveId]);

      // Settled, the routing takes the moves; the same load on the new routing is balanced: nothing moves again.
      release();
      await f.waitForMove(id, decision.moveId!, (m) => m.state === 'DONE', 'DONE');
      const layout = await f.countsLayout(id);
      expect(layout[1].flat().length).toBeGreaterThan(2);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect((await decisionsOf(id)).items.map((d) => d.decisionId)).toEqual([decision.decisionId]);
      expect((await movesOf(id)).map((m) => m.moveId)).toEqual([decision.moveId]);
      expect(sub.errors).toEqual([]);

      // Over GraphQL: the deployment's decisions, and one by id.
      const listed = await gql<{ deployment: { partitionerMode: string; scalingDecisions: { items: { decisionId: string; moves: { keyGroup: number }[]; inputs: string }[] } } }>(
        f.cp.url,
        f.tenant.readKey,
        'query ($id: ID!) { deployment(id: $id) { partitionerMode scalingDecisions { items { decisionId moves { keyGroup } inputs } } } }',
        { id },
      );
      expect(listed.body.errors).toBeUndefined();
      expect(listed.body.data?.deployment.partitionerMode).toBe('auto');
      expect(listed.body.data?.deployment.scalingDecisions.items.map((d) => d.decisionId)).toEqual([decision.decisionId]);
      expect(JSON.parse(listed.body.data!.deployment.scalingDecisions.items[0].inputs).keyGroupRates).toEqual(decision.inputs.keyGroupRates);
      const one = (await f.client.get(`/v1/deployments/${id}/scaling-decisions/${decision.decisionId}`)).body;
      expect(one).toEqual(decision);
    } finally {
      sub.dispose();
      await conn.client.dispose();
    }
  });

  it('in mode recommend (the default) the decision is recorded once, with two control planes planning, and nothing moves', async () => {
    // A second instance on the same queues and database: the deployment's row lock and its next look make one plan.
    const second = await startControlPlane(f.config);
    try {
      const id = await deploy('recommend', {});
      expect((await f.client.get(`/v1/deployments/${id}`)).body.partitionerMode).toBe('recommend');
      feed(id, skewed);
      const decision = await eventually('a recommendation', async () => (await decisionsOf(id)).items[0]);
      expect(decision).toMatchObject({ mode: 'recommend', kind: 'MOVE_KEY_GROUPS', moveId: null });
      expect(decision.reason).toContain('recommends moving');
      // The same recommendation is not written again every interval, and no move is asked for.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect((await decisionsOf(id)).items).toHaveLength(1);
      await recommendedOnly(id);
    } finally {
      await second.close();
    }
  });

  async function recommendedOnly(id: string): Promise<void> {
    expect(await movesOf(id)).toEqual([]);
    expect(worker.commands('move-key-groups', id)).toEqual([]);

    // PATCH sets the mode alone: no restart, not even an update of the lifecycle.
    const before = (await f.client.get(`/v1/deployments/${id}`)).body;
    const patched = await f.client.patch(`/v1/deployments/${id}`, { partitionerMode: 'off' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ partitionerMode: 'off', status: 'RUNNING', runNo: before.runNo, updatedAt: before.updatedAt });
    expect((await f.client.patch(`/v1/deployments/${id}`, { partitionerMode: 'always' })).body.errors).toEqual([
      { in: 'body', name: 'partitionerMode', reason: 'must be one of off, recommend, auto' },
    ]);
  }

  it('flags a hot key with its evidence and declines to split it where the operator is not a splittable window, moving what it can around it', async () => {
    const id = await deploy('viral', {});
    // Key group 0 is one key at 1,000 records/s of 1,620: no subtask can take it within the aim, and it may not be split.
    feed(id, (kg) => (kg === 0 ? 1000 : 20), [{ key: 'viral', keyGroup: 0, count: 1000, error: 0 }]);
    const decision = await eventually('a decision', async () => (await decisionsOf(id)).items[0]);
    expect(decision.detection.hotKeys).toEqual([{ key: 'viral', keyGroup: 0, rate: 1000, share: 1000 / 1620, ofFairLoad: 1000 / 810, error: 0, subtask: 0 }]);
    expect(decision.declined).toContainEqual(expect.objectContaining({ action: 'split', reason: 'not-mergeable', keyGroup: 0, key: 'viral' }));
    expect(decision.moves.every((m) => m.keyGroup !== 0)).toBe(true);
    expect(decision.reason).toContain('hot key "viral" (key group 0, 61.7% of records)');
    expect(decision.reason).toContain('split (not-mergeable)');
  });

  it('in mode auto, splits the hot key of a splittable window: a SPLIT_KEYS decision, its table sent to process 0, then held by the cool-down', async () => {
    const id = await deploy('split', { partitionerMode: 'auto' });
    // The same viral key, but the window is splittable (its subtasks report a split table, empty so far).
    const timer = feed(id, (kg) => (kg === 0 ? 1000 : 20), [{ key: 'viral', keyGroup: 0, count: 1000, error: 0 }], []);
    const decision = await eventually('a split decision', async () => (await decisionsOf(id)).items.find((d) => d.kind === 'SPLIT_KEYS' || d.kind === 'MOVE_KEY_GROUPS'));
    const body = decision as DecisionBody & { splits: { key: string; keyGroup: number; subtasks: number[]; weights: number[]; change: string }[] };
    expect(body.splits).toEqual([expect.objectContaining({ key: 'viral', keyGroup: 0, change: 'new' })]);
    expect(body.splits[0].subtasks).toEqual([0, 1]);
    expect(body.declined.some((d) => d.reason === 'not-mergeable')).toBe(false);
    expect(body.reason).toContain('splitting key "viral" (key group 0');
    // The table as the engine takes it: the key's own key group on its owner, a key group of subtask 1 for the other part.
    const sent = await eventually('the split table sent', async () => worker.commands('split-keys', id)[0]);
    expect(sent).toMatchObject({ runNo: 1, operatorId: 'counts', idempotencyKey: `split-${id}-${decision.decisionId}` });
    expect(sent.splits).toHaveLength(1);
    const [split] = sent.splits;
    expect(split).toMatchObject({ key: 'viral', keyGroup: 0 });
    expect(split.parts[0]).toBe(0);
    expect(split.parts[1]).toBeGreaterThanOrEqual(16);
    expect(split.weights.reduce((a, w) => a + w, 0)).toBeCloseTo(1, 6);
    // The run reports the table in effect, and the part's records where they now land: the view is balanced and the
    // key group cools down, so nothing is split, widened or folded back again.
    clearInterval(timer);
    const onPart = Math.round(1000 * split.weights[1]);
    feed(id, (kg) => (kg === 0 ? 1000 - onPart : kg === split.parts[1] ? 20 + onPart : 20), [
      { key: 'viral', keyGroup: 0, count: 1000 - onPart, error: 0 },
      { key: 'viral', keyGroup: split.parts[1], count: onPart, error: 0 },
    ], sent.splits);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(worker.commands('split-keys', id)).toHaveLength(1);
  });

  it('in mode recommend, recommends the split and sends nothing', async () => {
    const id = await deploy('split-rec', {});
    feed(id, (kg) => (kg === 0 ? 1000 : 20), [{ key: 'viral', keyGroup: 0, count: 1000, error: 0 }], []);
    const decision = await eventually('a recommendation', async () => (await decisionsOf(id)).items[0]);
    expect(decision.mode).toBe('recommend');
    expect(decision.reason).toContain('recommends splitting key "viral"');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(worker.commands('split-keys', id)).toEqual([]);
  });

  it('a balanced load in mode auto records nothing and moves nothing', async () => {
    const id = await deploy('balanced', { partitionerMode: 'auto' });
    feed(id, balanced);
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    // It was looked at (its next look is scheduled), and found nothing worth a decision.
    const pool = createPool({ connectionString: f.config.WEIR_PG_URL, max: 1 });
    try {
      const next = await withTenant(pool, f.tenant.tenantId, async (c) => (await c.query<{ at: Date | null }>('SELECT partitioner_next_at AS at FROM deployments WHERE id = $1', [id])).rows[0].at);
      expect(next).not.toBeNull();
    } finally {
      await pool.end();
    }
    expect((await decisionsOf(id)).items).toEqual([]);
    expect(await movesOf(id)).toEqual([]);
  });

  it('another tenant reads none of the decisions, over REST or through row-level security', async () => {
    const auto = (await f.client.get('/v1/deployments')).body.items.find((d: { name: string }) => d.name === `auto-${f.run}`) as { id: string };
    const ours = (await decisionsOf(auto.id)).items;
    expect(ours.length).toBe(1);
    const other = await createTestTenant(f.config);
    try {
      const theirs = api(() => f.cp.url, other.readKey);
      expect((await theirs.get(`/v1/deployments/${auto.id}/scaling-decisions`)).status).toBe(404);
      expect((await theirs.get(`/v1/deployments/${auto.id}/scaling-decisions/${ours[0].decisionId}`)).status).toBe(404);
      const pool = createPool({ connectionString: f.config.WEIR_PG_URL, max: 1 });
      try {
        const count = (tenantId: string) =>
          withTenant(pool, tenantId, async (client) => (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM deployment_scaling_decisions WHERE deployment_id = $1', [auto.id])).rows[0].n);
        expect(await count(other.tenantId)).toBe(0);
        expect(await count(f.tenant.tenantId)).toBe(1);
      } finally {
        await pool.end();
      }
    } finally {
      await other.cleanup();
    }
  });
});

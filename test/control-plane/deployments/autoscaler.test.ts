/**
 * The autoscaler's controller against the real Postgres and Redis, with the partitioner test's set-up: a stand-in
 * worker made of the protocol (ProtocolWorker) running each deployment's processes, and `counts` snapshots written
 * into the metrics store as the heartbeat path writes them. Sustained overload in mode auto → SCALE_UP recorded,
 * pushed on scalingDecisions, and the live rescale asked for (then, once it is DONE, nothing within the cool-down);
 * in mode recommend (the default) → the decision only; inside the stabilization window → nothing; load below →
 * SCALE_DOWN only after its window; a hot key the partitioner may not split → HOLD with the partitioner's reason;
 * another tenant reads none of it; bad modes and properties are 400s.
 */
import type { RescaleReport, RescaleRun } from '@weir/protocol';
import { createPool, withTenant } from '@weir/db';
import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisPubSub } from '../../../apps/control-plane/src/events/redis-pubsub';
import { MetricsStore } from '../../../apps/control-plane/src/metrics/metrics-store';
import { eventually, startControlPlane } from '../support/control-plane';
import { createTestTenant } from '../support/tenants';
import { collect, connectWs, gql, snapshotOf } from '../graphql/support';
import { contiguous, movesFixture } from './moves-fixture';
import type { ProtocolWorker } from './protocol-worker';
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
  fromParallelism: number | null;
  toParallelism: number | null;
  inputs: {
    processes: number;
    operators: { operatorId: string; trueRatePerSubtask: number | null; utilization: number; parallelism: number; busyMsPerSec: { mean: number; max: number } }[];
    source: { backlog: number | null; scale: number };
    fleet: { slotsNeeded: number; slotsFree: number };
    hold: string | null;
    stabilization: { direction: string | null; heldMs: number; windowMs: number };
  };
  decidedAt: string;
}

interface DeploymentBody {
  status: string;
  runNo: number;
  autoscalerMode: string;
  pendingParallelism: { default: number; operators: Record<string, number> } | null;
  rescale: { rescaleId: string; state: string; fromProcesses: number; toProcesses: number; toParallelism: { operators: Record<string, number> }; finishedAt: string | null } | null;
  layout: { processes: unknown[] } | null;
}

/**
 * `counts` at parallelism n, each subtask owning its contiguous key groups: every key group at `perKeyGroup` records/s,
 * busy time `busyPerRecord` ms per record (1,000 records/s when busy all the time at 1 ms).
 */
interface Load {
  /** Busy ms per record (1: 1,000 records/s when busy all the time). */
  readonly busyPerRecord?: number;
  readonly heavyKeys?: SubtaskMetricsSnapshot['heavyKeys'];
  /** Event-time latencies each subtask recorded in the interval. */
  readonly latenciesMs?: number[];
}

function countsSnapshots(tenantId: string, deploymentId: string, n: number, perKeyGroup: (kg: number) => number, load: Load): SubtaskMetricsSnapshot[] {
  const { busyPerRecord = 1, heavyKeys = [], latenciesMs = [] } = load;
  const owners = contiguous(n);
  return Array.from({ length: n }, (_, subtask) => {
    const keyGroupCounts: Record<number, number> = {};
    owners.forEach((owner, kg) => {
      if (owner === subtask) keyGroupCounts[kg] = perKeyGroup(kg);
    });
    const records = Object.values(keyGroupCounts).reduce((a, r) => a + r, 0);
    const busyMsPerSec = Math.min(1000, records * busyPerRecord);
    const own = heavyKeys.filter((k) => owners[k.keyGroup] === subtask);
    return snapshotOf(tenantId, deploymentId, { operatorId: 'counts', subtask, keyGroupCounts, recordsIn: records, recordsInPerSec: records, busyMsPerSec, idleMsPerSec: 1000 - busyMsPerSec, heavyKeys: own, latenciesMs });
  });
}

/** 2 subtasks each taking 900 records/s at 1 ms a record: 90% busy, balanced; DS2 sizes it at 3 (1,800 ÷ 700). */
const overloaded = () => 900 / 16;
/** 2 subtasks each at 100 records/s, 10% busy: DS2 sizes it at 1. */
const idle = () => 100 / 16;

describe('the autoscaler controller', { timeout: 180_000 }, () => {
  const f = movesFixture('asc');
  let worker: ProtocolWorker;
  const feeds = new Map<string, NodeJS.Timeout>();
  afterAll(() => feeds.forEach(clearInterval));

  /** Keeps the deployment's snapshots fresh in the metrics store, as its workers' heartbeats would (every 200 ms here); replaces its previous feed. */
  function feed(deploymentId: string, n: number, perKeyGroup: (kg: number) => number, load: Load = {}): void {
    clearInterval(feeds.get(deploymentId));
    const store = f.cp.app.get(MetricsStore);
    const write = () => void store.record(countsSnapshots(f.tenant.tenantId, deploymentId, n, perKeyGroup, load), Date.now(), 10_000).catch(() => undefined);
    write();
    feeds.set(deploymentId, setInterval(write, 200));
  }

  async function deploy(name: string, properties: Record<string, string>, extra: Record<string, unknown> = {}): Promise<string> {
    const created = await f.client.post('/v1/deployments', {
      name: `${name}-${f.run}`,
      bundleId: f.bundleId,
      parallelism: { default: 1, operators: { counts: 2 } },
      config: { properties: { 'autoscaler.interval-ms': '1000', 'autoscaler.cooldown-ms': '0', ...properties } },
      ...extra,
    });
    expect(created.status).toBe(201);
    await waitForStatus(f.client, created.body.id as string, 'RUNNING');
    return created.body.id as string;
  }

  const get = async (id: string) => (await f.client.get(`/v1/deployments/${id}`)).body as DeploymentBody;
  const autoscalerDecisions = async (id: string) =>
    ((await f.client.get(`/v1/deployments/${id}/scaling-decisions`)).body as { items: DecisionBody[] }).items.filter((d) => d.source === 'autoscaler');
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('refuses a bad autoscaler mode or property with a 400 naming the field', async () => {
    worker = await f.startWorker('w', 16);
    const bad = await f.client.post('/v1/deployments', { name: `bad-${f.run}`, bundleId: f.bundleId, autoscalerMode: 'sometimes' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([{ in: 'body', name: 'autoscalerMode', reason: 'must be one of off, recommend, auto' }]);
    const badProperty = await f.client.post('/v1/deployments', { name: `bad-${f.run}`, bundleId: f.bundleId, config: { properties: { 'autoscaler.target-utilization': '2' } } });
    expect(badProperty.status).toBe(400);
    expect(badProperty.body.errors).toEqual([
      { in: 'body', name: 'config.properties.autoscaler.target-utilization', reason: 'properties.autoscaler.target-utilization must be a number in [0.1, 0.95], not "2"' },
    ]);
    const tooWide = await f.client.post('/v1/deployments', { name: `bad-${f.run}`, bundleId: f.bundleId, config: { properties: { 'autoscaler.max-parallelism': '64' } } });
    expect((tooWide.body.errors as { name: string }[]).map((e) => e.name)).toEqual(['config.properties.autoscaler.max-parallelism']);
  });

  it('in mode auto, sustained overload past the window is a SCALE_UP, pushed, asked for as a live rescale; after it, the cool-down holds', async () => {
    // Process 0 answers a rescale once released, with the report a worker sends: contiguous ranges at the new width.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const rescales: RescaleRun[] = [];
    worker.onRescale = async (command): Promise<RescaleReport> => {
      rescales.push(command);
      await released;
      const n = command.parallelism.counts;
      const [before, after] = [contiguous(2), contiguous(n)];
      const moved = after.flatMap((to, kg) => (to === before[kg] ? [] : [{ operatorId: 'counts', keyGroup: kg, fromSubtask: before[kg], toSubtask: to, bytes: 10, pauseMs: 1 }]));
      return { rescaleId: command.rescaleId, processes: command.processes, parallelism: { ...command.parallelism }, routing: { counts: after }, moved, durationMs: 20 };
    };
    const id = await deploy('auto', { 'autoscaler.scale-up-window-ms': '3000', 'autoscaler.cooldown-ms': '6000' }, { autoscalerMode: 'auto' });
    expect((await get(id)).autoscalerMode).toBe('auto');

    const conn = connectWs(f.cp.url, `Bearer ${f.tenant.readKey}`);
    await conn.connected;
    const sub = collect<{ scalingDecisions: { decisionId: string; source: string; kind: string; mode: string; fromParallelism: number | null; toParallelism: number | null } }>(
      conn.client,
      'subscription ($id: ID!) { scalingDecisions(deploymentId: $id) { decisionId source kind mode fromParallelism toParallelism } }',
      { id },
    );
    try {
      await eventually('the subscription live', async () => (f.cp.app.get(RedisPubSub).channelCount >= 1 ? true : undefined));
      // The run just started: the cool-down (6 s from it) holds first, then the up window (3 s) must pass.
      const fedAt = Date.now();
      feed(id, 2, overloaded);
      await sleep(2_000);
      expect(await autoscalerDecisions(id)).toEqual([]);
      const pushed = await sub.next();
      const [decision] = await autoscalerDecisions(id);
      expect(decision).toMatchObject({ deploymentId: id, runNo: 1, source: 'autoscaler', operatorId: 'counts', mode: 'auto', kind: 'SCALE_UP', fromParallelism: 2, toParallelism: 3 });
      expect(Date.parse(decision.decidedAt) - fedAt).toBeGreaterThanOrEqual(3_000);
      expect(decision.reason).toMatch(/^operator counts at 90% utilization for 1800 records\/s over 2 subtasks: above 80%; 3 subtasks meet it at 70%; rescaling live 2 → 3 subtasks \(held \d+ s, window 3 s\)$/);
      expect(decision.inputs.operators).toEqual([expect.objectContaining({ operatorId: 'counts', trueRatePerSubtask: 1000, utilization: 0.9, parallelism: 3, busyMsPerSec: expect.objectContaining({ mean: 900, max: 900 }) })]);
      // No Kafka source reports a backlog here: the operators' own rates are the demand.
      expect(decision.inputs.source).toMatchObject({ backlog: null, scale: 1 });
      expect(decision.inputs.fleet.slotsNeeded).toBe(1);
      expect(decision.inputs.fleet.slotsFree).toBeGreaterThanOrEqual(1);
      expect(decision.inputs.stabilization).toMatchObject({ direction: 'up', windowMs: 3_000 });
      expect(pushed.scalingDecisions).toEqual({ decisionId: decision.decisionId, source: 'autoscaler', kind: 'SCALE_UP', mode: 'auto', fromParallelism: 2, toParallelism: 3 });

      // Asked for as PATCH {parallelism, rescaleMode: live} asks: the reconciler takes it live, 2 → 3 processes.
      const rescaling = await eventually('the live rescale', async () => {
        const d = await get(id);
        return d.rescale && d.rescale.toProcesses === 3 ? d : undefined;
      });
      expect(rescaling.rescale).toMatchObject({ fromProcesses: 2, toProcesses: 3, toParallelism: { operators: { counts: 3, words: 1 } } });
      // The deployment shows the rescale once it is recorded; the command reaches process 0 just after.
      await eventually('the rescale at process 0', async () => (rescales.length > 0 ? true : undefined));
      expect(rescales.map((c) => c.parallelism.counts)).toEqual([3]);
      release();
      const done = await eventually('the rescale DONE', async () => {
        const d = await get(id);
        return d.rescale?.state === 'DONE' && d.status === 'RUNNING' ? d : undefined;
      });
      expect(done.layout?.processes).toHaveLength(3);

      // Still overloaded at 3 (90% busy again): nothing within the cool-down after the rescale, then 3 → 4.
      feed(id, 3, () => 2_700 / 32);
      await sleep(4_000);
      expect((await autoscalerDecisions(id)).map((d) => d.decisionId)).toEqual([decision.decisionId]);
      const next = await eventually('the next step', async () => (await autoscalerDecisions(id)).find((d) => d.decisionId !== decision.decisionId), { timeoutMs: 30_000, everyMs: 250 });
      expect(next).toMatchObject({ kind: 'SCALE_UP', fromParallelism: 3, toParallelism: 4, runNo: 1 });
      expect(Date.parse(next.decidedAt) - Date.parse(done.rescale!.finishedAt!)).toBeGreaterThanOrEqual(6_000 + 3_000 - 200);
      expect(sub.errors).toEqual([]);

      // Over GraphQL: the deployment's mode and its decisions, the autoscaler's beside the partitioner's.
      const listed = await gql<{ deployment: { autoscalerMode: string; scalingDecisions: { items: { decisionId: string; source: string; toParallelism: number | null; inputs: string }[] } } }>(
        f.cp.url,
        f.tenant.readKey,
        'query ($id: ID!) { deployment(id: $id) { autoscalerMode scalingDecisions { items { decisionId source toParallelism inputs } } } }',
        { id },
      );
      expect(listed.body.errors).toBeUndefined();
      expect(listed.body.data?.deployment.autoscalerMode).toBe('auto');
      const items = listed.body.data!.deployment.scalingDecisions.items.filter((d) => d.source === 'autoscaler');
      expect(items.map((d) => [d.decisionId, d.toParallelism])).toEqual([
        [next.decisionId, 4],
        [decision.decisionId, 3],
      ]);
      expect(JSON.parse(items[1].inputs).operators[0].trueRatePerSubtask).toBe(1000);
    } finally {
      sub.dispose();
      await conn.client.dispose();
      worker.onRescale = null;
      // Its snapshots go stale from here: the run's next width has no figures, so it decides nothing more.
      clearInterval(feeds.get(id));
    }
  });

  it('in mode recommend (the default) the SCALE_UP is recorded once, with two control planes looking, and nothing changes', async () => {
    // A second instance on the same queues and database: the deployment's row lock and its next look make one look.
    const second = await startControlPlane(f.config);
    const id = await deploy('recommend', { 'autoscaler.scale-up-window-ms': '1000' });
    const before = await get(id);
    expect(before.autoscalerMode).toBe('recommend');
    try {
      feed(id, 2, overloaded);
      const decision = await eventually('a recommendation', async () => (await autoscalerDecisions(id))[0]);
      expect(decision).toMatchObject({ mode: 'recommend', kind: 'SCALE_UP', fromParallelism: 2, toParallelism: 3 });
      expect(decision.reason).toContain('recommends rescaling 2 → 3 subtasks');
      // The same recommendation is not written again every look, and no rescale is asked for.
      await sleep(3_000);
      expect(await autoscalerDecisions(id)).toHaveLength(1);
    } finally {
      await second.close();
    }
    const after = await get(id);
    expect(after).toMatchObject({ status: 'RUNNING', runNo: before.runNo, pendingParallelism: null, rescale: null });
    expect(after.layout?.processes).toHaveLength(2);

    // PATCH sets the mode alone; a bad one is a 400.
    const patched = await f.client.patch(`/v1/deployments/${id}`, { autoscalerMode: 'off' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ autoscalerMode: 'off', status: 'RUNNING', runNo: before.runNo });
    expect((await f.client.patch(`/v1/deployments/${id}`, { autoscalerMode: 'always' })).body.errors).toEqual([
      { in: 'body', name: 'autoscalerMode', reason: 'must be one of off, recommend, auto' },
    ]);
    // Over GraphQL, as PATCH: the mode alone.
    const set = await gql<{ setDeploymentAutoscalerMode: { autoscalerMode: string; runNo: number } }>(
      f.cp.url,
      f.tenant.writeKey,
      'mutation ($id: ID!) { setDeploymentAutoscalerMode(id: $id, mode: recommend) { autoscalerMode runNo } }',
      { id },
    );
    expect(set.body.errors).toBeUndefined();
    expect(set.body.data?.setDeploymentAutoscalerMode).toEqual({ autoscalerMode: 'recommend', runNo: before.runNo });
  });

  it('scales up before the latency objective is missed: p99 near the SLO threshold while busy, though the rates alone would not', async () => {
    const id = await deploy('slo', { 'autoscaler.scale-up-window-ms': '1000' });
    const slo = await f.client.post('/v1/slos', { name: 'fast', deploymentId: id, percentile: 'p99', thresholdMs: 100, target: 0.99 });
    expect(slo.status).toBe(201);
    // 75% busy (inside the 50–80% band) with every record 90 ms late: above 80% of the 100 ms objective.
    feed(id, 2, () => 750 / 16, { latenciesMs: new Array<number>(200).fill(90) });
    const decision = await eventually('an SLO-driven step', async () => (await autoscalerDecisions(id))[0], { timeoutMs: 20_000, everyMs: 250 });
    expect(decision).toMatchObject({ kind: 'SCALE_UP', fromParallelism: 2, toParallelism: 3 });
    expect(decision.reason).toMatch(/^SLO fast: p99 event-time latency 90 ms is above 80% of its 100 ms threshold while counts is 75% busy: one more subtask before the objective is missed/);
    expect((decision.inputs as unknown as { slo: { sloId: string; pressure: boolean; thresholdMs: number } }).slo).toMatchObject({ sloId: slo.body.id, pressure: true, thresholdMs: 100 });
  });

  it('scales down only once the load stayed below for the down window', async () => {
    const id = await deploy('down', { 'autoscaler.scale-up-window-ms': '0', 'autoscaler.scale-down-window-ms': '6000' });
    const fedAt = Date.now();
    feed(id, 2, idle);
    await sleep(4_000);
    expect(await autoscalerDecisions(id)).toEqual([]);
    const decision = await eventually('a scale-down', async () => (await autoscalerDecisions(id))[0], { timeoutMs: 20_000, everyMs: 250 });
    expect(decision).toMatchObject({ kind: 'SCALE_DOWN', fromParallelism: 2, toParallelism: 1 });
    expect(Date.parse(decision.decidedAt) - fedAt).toBeGreaterThanOrEqual(6_000);
    expect(decision.inputs.stabilization).toMatchObject({ direction: 'down', windowMs: 6_000 });
    expect(decision.reason).toMatch(/^operator counts at 10% utilization for 200 records\/s over 2 subtasks: below 50%; 1 subtasks meet it at 20%; recommends rescaling 2 → 1/);
  });

  it('leaves a hot key the partitioner may not split to the partitioner: HOLD with its reason', async () => {
    const id = await deploy('viral', { 'autoscaler.scale-up-window-ms': '2000', 'partitioner.interval-ms': '1000' });
    // Key group 0 is one key at 1,000 records/s: subtask 0 is 91% busy, subtask 1 22%; the mean (57%) asks for no more subtasks.
    feed(id, 2, (kg) => (kg === 0 ? 1000 : 20), { busyPerRecord: 0.7, heavyKeys: [{ key: 'viral', keyGroup: 0, count: 1000, error: 0 }] });
    const hold = await eventually('a HOLD naming the hot key', async () => (await autoscalerDecisions(id)).find((d) => d.inputs.hold === 'hot-key'), { timeoutMs: 20_000, everyMs: 250 });
    expect(hold).toMatchObject({ kind: 'HOLD', fromParallelism: 2, toParallelism: 2, operatorId: 'counts' });
    const partitioner = ((await f.client.get(`/v1/deployments/${id}/scaling-decisions`)).body as { items: DecisionBody[] }).items.find((d) => d.source === 'partitioner')!;
    expect(hold.reason).toBe(
      `subtask 0 of counts is 91% busy while the mean is 57%: hot key "viral" (key group 0, 62% of records), whose split the partitioner declined as not mergeable (decision ${partitioner.decisionId}); more subtasks cannot split a key, so it is left to the partitioner; holding the parallelism`,
    );
    expect((await get(id)).pendingParallelism).toBeNull();
  });

  it('another tenant reads none of the decisions, over REST or through row-level security', async () => {
    const auto = (await f.client.get('/v1/deployments')).body.items.find((d: { name: string }) => d.name === `auto-${f.run}`) as { id: string };
    // The auto case's decisions (two when it passed; at least its first even when it did not).
    const ours = await autoscalerDecisions(auto.id);
    expect(ours.length).toBeGreaterThan(0);
    const other = await createTestTenant(f.config);
    try {
      const theirs = api(() => f.cp.url, other.readKey);
      expect((await theirs.get(`/v1/deployments/${auto.id}/scaling-decisions`)).status).toBe(404);
      expect((await theirs.get(`/v1/deployments/${auto.id}/scaling-decisions/${ours[0].decisionId}`)).status).toBe(404);
      const pool = createPool({ connectionString: f.config.WEIR_PG_URL, max: 1 });
      try {
        const count = (tenantId: string) =>
          withTenant(pool, tenantId, async (client) => (await client.query<{ n: number }>("SELECT count(*)::int AS n FROM deployment_scaling_decisions WHERE deployment_id = $1 AND source = 'autoscaler'", [auto.id])).rows[0].n);
        expect(await count(other.tenantId)).toBe(0);
        expect(await count(f.tenant.tenantId)).toBe(ours.length);
      } finally {
        await pool.end();
      }
    } finally {
      await other.cleanup();
    }
  });
});

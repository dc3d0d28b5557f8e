import { randomBytes } from 'node:crypto';
import { createPool, withTenant } from '@weir/db';
import { createWorkerReporter, type WorkerReporter } from '@weir/protocol';
import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricsKeys, minuteStart } from '../../../apps/control-plane/src/metrics/metrics-keys';
import { SloMinuteCloser } from '../../../apps/control-plane/src/slos/slo-minute-closer';
import { deleteQueues, deleteWorkers, eventually, readJson, startControlPlane, testConfig, uniquePrefix, type PageBody, type ProblemBody, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';
import { collect, connectWs, deleteEventKeys, insertDeployment, snapshotOf } from '../graphql/support';

interface SloBody {
  id: string;
  name: string;
  deploymentId: string;
  percentile: string;
  thresholdMs: number;
  target: number;
  windowMinutes: number;
  status: {
    state: string;
    evaluatedMinute: string | null;
    goodMinutes: number;
    badMinutes: number;
    compliance: number | null;
    burnRate: number | null;
    burnRate5m: number | null;
    errorBudgetRemaining: number | null;
  };
}
interface SloEventBody {
  kind: string;
  minute: string;
  compliance: number;
  burnRate: number;
  reason: string;
}

const MIN = 60_000;
const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: '200' });
const workerId = `slo-worker-${randomBytes(3).toString('hex')}`;
const deploymentId = `dep-slo-${randomBytes(4).toString('hex')}`;
let app: RunningControlPlane;
let second: RunningControlPlane;
let tenant: TestTenant;
let other: TestTenant;
let reporter: WorkerReporter | undefined;
const redis = new Redis(config.WEIR_REDIS_URL);

beforeAll(async () => {
  [app, second] = await Promise.all([startControlPlane(config), startControlPlane(config)]);
  [tenant, other] = await Promise.all([createTestTenant(config), createTestTenant(config)]);
  await insertDeployment(config, tenant.tenantId, deploymentId);
});

afterAll(async () => {
  await reporter?.stop('test done');
  await Promise.allSettled([app?.close(), second?.close()]);
  await Promise.allSettled([tenant?.cleanup(), other?.cleanup()]);
  await deleteWorkers(config, [workerId]);
  await deleteQueues(config);
  await deleteEventKeys(config);
  redis.disconnect();
});

function api(path: string, key: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${app.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
  });
}

const valid = { name: 'p99 under 100 ms', deploymentId, percentile: 'p99', thresholdMs: 100, target: 0.9, windowMinutes: 10 };

describe('latency SLOs', () => {
  it('refuses invalid input with problem details naming each field', async () => {
    const res = await api('/v1/slos', tenant.writeKey, {
      method: 'POST',
      body: JSON.stringify({ name: '', deploymentId: 'not ok!', percentile: 'p90', thresholdMs: -1, target: 1, windowMinutes: 2, extra: true }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = await readJson<ProblemBody>(res);
    expect(problem.errors?.map((e) => e.name).sort()).toEqual(['deploymentId', 'extra', 'name', 'percentile', 'target', 'thresholdMs', 'windowMinutes']);
    expect(JSON.stringify(problem)).not.toMatch(/\.ts:\d+/);

    const unknown = await api('/v1/slos', tenant.writeKey, { method: 'POST', body: JSON.stringify({ ...valid, deploymentId: 'no-such-deployment' }) });
    expect(unknown.status).toBe(400);
    expect((await readJson<ProblemBody>(unknown)).errors).toEqual([{ in: 'body', name: 'deploymentId', reason: 'no deployment "no-such-deployment" exists' }]);

    const notJson = await api('/v1/slos', tenant.writeKey, { method: 'POST', body: '{"name":' });
    expect(notJson.status).toBe(400);
    const readOnly = await api('/v1/slos', tenant.readKey, { method: 'POST', body: JSON.stringify(valid) });
    expect(readOnly.status).toBe(403);
    const anonymous = await fetch(`${app.url}/v1/slos`);
    expect(anonymous.status).toBe(401);
  });

  it('evaluates per-minute latency fed through worker heartbeats: compliance, burn rate, breach and recovery as computed by hand', async () => {
    const created = await api('/v1/slos', tenant.writeKey, { method: 'POST', body: JSON.stringify(valid) });
    expect(created.status).toBe(201);
    const slo = await readJson<SloBody>(created);
    expect(slo).toMatchObject({ ...valid, status: { state: 'NO_DATA', compliance: null, burnRate: null } });

    // Another tenant sees nothing of it.
    expect((await api(`/v1/slos/${slo.id}`, other.readKey)).status).toBe(404);
    expect((await readJson<PageBody<SloBody>>(await api('/v1/slos', other.readKey))).items).toEqual([]);

    const ws = connectWs(app.url, `Bearer ${tenant.readKey}`);
    const updates = collect<{ sloStatus: { state: string; event: string | null; compliance: number; burnRate: number; burnRate5m: number } }>(
      ws.client,
      'subscription ($id: ID!) { sloStatus(sloId: $id) { state event compliance burnRate burnRate5m goodMinutes badMinutes } }',
      { id: slo.id },
    );
    await ws.connected;

    // Ten closed minutes, one snapshot each; minute 9 is bad (p99 500 ms > 100 ms), the others good (p99 30 ms).
    const first = minuteStart(Date.now()) - 10 * MIN;
    const minutes = Array.from({ length: 10 }, (_, i) => first + i * MIN);
    const snapshots: SubtaskMetricsSnapshot[] = minutes.map((m, i) =>
      snapshotOf(tenant.tenantId, deploymentId, { fromMs: m + 10_000, toMs: m + 50_000, latenciesMs: i === 8 ? [500, 500, 500] : [10, 20, 30] }),
    );
    // Heartbeats repeat the snapshots until all ten minutes are pending; repeats count once (and a repeat after
    // its minute closed is left out of the closed minute).
    let feeding = true;
    reporter = createWorkerReporter(config, { workerId, slots: 1, version: 'test' }, {
      status: () => ({ runningSubtasks: [], metrics: feeding ? snapshots : [] }),
    });
    await reporter.start();
    const keys = new MetricsKeys(config.WEIR_QUEUE_PREFIX);
    await eventually('ten minutes pending', async () => ((await redis.zcard(keys.pendingMinutes)) >= 10 ? true : undefined));
    feeding = false;

    const closers = [app, second].map((instance) => instance.app.get(SloMinuteCloser));
    // Both instances close at once, "two minutes from now" so that every fed minute is past its grace: each minute
    // is closed by exactly one of them (one slo_minutes row each, below, and each evaluation pushed once).
    const after = await eventually('the last minute evaluated', async () => {
      await Promise.all(closers.map((c) => c.tick(Date.now() + 2 * MIN)));
      const body = await readJson<SloBody>(await api(`/v1/slos/${slo.id}`, tenant.readKey));
      return body.status.evaluatedMinute === new Date(minutes[9]).toISOString() ? body : undefined;
    });
    expect(after.status.state).toBe('OK');
    expect(after.status.evaluatedMinute).toBe(new Date(minutes[9]).toISOString());
    expect(after.status.goodMinutes).toBe(9);
    expect(after.status.badMinutes).toBe(1);
    expect(after.status.compliance).toBeCloseTo(0.9, 12);
    // (1/10) / (1 − 0.9) = 1; last five minutes: (1/5) / 0.1 = 2.
    expect(after.status.burnRate).toBeCloseTo(1, 9);
    expect(after.status.burnRate5m).toBeCloseTo(2, 9);
    expect(after.status.errorBudgetRemaining).toBeCloseTo(0, 9);

    // Minute 9 took compliance to 8/9 < 0.9 (a breach, burn (1/9)/0.1); minute 10 brought it back to 9/10.
    const events = await readJson<PageBody<SloEventBody>>(await api(`/v1/slos/${slo.id}/events`, tenant.readKey));
    expect(events.items.map((e) => [e.kind, e.minute])).toEqual([
      ['BREACH', new Date(minutes[8]).toISOString()],
      ['RECOVERED', new Date(minutes[9]).toISOString()],
    ]);
    expect(events.items[0].compliance).toBeCloseTo(8 / 9, 12);
    expect(events.items[0].burnRate).toBeCloseTo(10 / 9, 9);
    expect(events.items[0].reason).toContain('fell below the target');

    // The merged minute percentiles are stored per deployment (RLS: as the tenant).
    const pool = createPool({ connectionString: config.WEIR_PG_URL, max: 1 });
    const rows = await withTenant(pool, tenant.tenantId, async (c) =>
      (await c.query<{ samples: string; p99_ms: number }>('SELECT samples, p99_ms FROM slo_minutes WHERE deployment_id = $1 ORDER BY minute', [deploymentId])).rows,
    );
    await pool.end();
    expect(rows.map((r) => Number(r.samples))).toEqual(Array(10).fill(3));
    expect(rows[8].p99_ms).toBeCloseTo(500, 0);
    expect(rows[0].p99_ms).toBeCloseTo(30, 0);

    // Every evaluation was pushed: ten updates, the breach and the recovery flagged.
    await eventually('ten sloStatus pushes', async () => (updates.items.length >= 10 ? true : undefined));
    expect(updates.items).toHaveLength(10);
    expect(updates.items.map((u) => u.sloStatus.event).filter(Boolean)).toEqual(['BREACH', 'RECOVERED']);
    expect(updates.items[9].sloStatus).toMatchObject({ state: 'OK', goodMinutes: 9, badMinutes: 1 });
    await ws.client.dispose();

    expect((await api(`/v1/slos/${slo.id}`, other.writeKey, { method: 'DELETE' })).status).toBe(404);
    expect((await api(`/v1/slos/${slo.id}`, tenant.writeKey, { method: 'DELETE' })).status).toBe(204);
    expect((await api(`/v1/slos/${slo.id}`, tenant.readKey)).status).toBe(404);
  });
});

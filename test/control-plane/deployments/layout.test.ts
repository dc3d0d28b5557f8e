/**
 * A deployment across several job host processes on several workers, from the control plane's side, against the
 * real Postgres and Redis: placement spreads the processes over the live workers' free slots and records the
 * layout (REST and GraphQL show it); each process gets its own run-subtasks; RUNNING only once every process runs;
 * a job host LOST (not FAILED) writes the whole run off, stops the survivors and, once they left, re-places it from
 * the latest checkpoint; savepoints go to process 0, a suspend's stop to every process. A deployment wider than
 * the fleet says so, then goes FAILED after its placement timeout. The workers are the protocol's own reporter and
 * command consumer (ProtocolWorker): what they report is what the test says, so nothing here waits on the engine.
 */
import { randomBytes } from 'node:crypto';
import type { RunSubtasks, StopSubtasks } from '@weir/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, deleteQueues, deleteWorkers, eventually, startControlPlane, testConfig, uniquePrefix, type RunningControlPlane } from '../support/control-plane';
import { createTestTenant, type TestTenant } from '../support/tenants';
import { gql } from '../graphql/support';
import { ProtocolWorker } from './protocol-worker';
import { api, insertBundle, sha256, waitForDeployment, waitForStatus, type Api } from './support';

const run = randomBytes(3).toString('hex');
const WHOLE = [[0, 31]];

describe('deployment layout across processes and workers', { timeout: 120_000 }, () => {
  const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_WORKER_HEARTBEAT_MS: '200' });
  // Ids sort as a < b: with equal free slots, a takes processes first.
  const ids = { a: `lay-a-${run}`, b: `lay-b-${run}`, narrow: `lay-n-${run}` };
  let tenant: TestTenant;
  let cp: RunningControlPlane;
  let client: Api;
  let bundleId: string;
  const workers: ProtocolWorker[] = [];
  const workerStatus = async (id: string) => {
    const res = await fetch(`${cp.url}/v1/workers/${id}`, { headers: adminHeaders() });
    return res.status === 200 ? ((await res.json()) as { status: string; runningSubtasks: { process: number }[] }) : undefined;
  };
  const startWorker = async (id: string, slots: number) => {
    const w = new ProtocolWorker(config, id, slots);
    workers.push(w);
    await w.start();
    await eventually(`worker ${id} ALIVE`, async () => ((await workerStatus(id))?.status === 'ALIVE' ? true : undefined));
    return w;
  };
  const stopWorker = async (w: ProtocolWorker) => {
    await w.stop();
    workers.splice(workers.indexOf(w), 1);
    await eventually(`worker ${w.id} STOPPED`, async () => ((await workerStatus(w.id))?.status === 'STOPPED' ? true : undefined));
  };

  beforeAll(async () => {
    tenant = await createTestTenant(config);
    // The workers never run the bundle: any bytes do, under the manifest of the word-count job.
    const code = Buffer.from('export default {};');
    bundleId = await insertBundle(config, tenant.tenantId, { code, sha256: sha256(code) });
    cp = await startControlPlane(config);
    client = api(() => cp.url, tenant.writeKey);
  });

  afterAll(async () => {
    await cp?.close();
    for (const w of workers) await w.stop().catch(() => undefined);
    await tenant?.cleanup();
    await deleteWorkers(config, Object.values(ids));
    await deleteQueues(config);
  });

  it('a deployment wider than the fleet waits saying so, then goes FAILED after placement.timeout-ms', async () => {
    const narrow = await startWorker(ids.narrow, 1);
    const created = await client.post('/v1/deployments', {
      name: `wide-${run}`,
      bundleId,
      parallelism: { default: 1, operators: { counts: 3 } },
      config: { properties: { 'placement.timeout-ms': '4000' } },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const waiting = await waitForDeployment(client, id, 'waiting for slots', (d) => d.statusReason.startsWith('waiting for'));
    expect(waiting).toMatchObject({ status: 'STARTING', runNo: 0 });
    expect(waiting.statusReason).toMatch(/^waiting for 3 free slots: the fleet has 1 free on 1 live worker; FAILED at \S+ if still not placed$/);
    expect((await client.get(`/v1/deployments/${id}`)).body.layout).toBeNull();

    const failed = await waitForStatus(client, id, 'FAILED', 20_000);
    expect(failed.statusReason).toBe('no run could be placed within 4 s: waiting for 3 free slots: the fleet has 1 free on 1 live worker; a restart starts without state');
    expect(narrow.received).toEqual([]);
    const history = await client.get(`/v1/deployments/${id}/history`);
    expect(history.body.runs).toEqual([]);
    expect(history.body.transitions.map((t: { to: string }) => t.to)).toEqual(['CREATED', 'STARTING', 'FAILED']);

    // An out-of-range timeout is a 400 naming the property.
    const bad = await client.post('/v1/deployments', { name: `bad-${run}`, bundleId, config: { properties: { 'placement.timeout-ms': '5' } } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('config.properties.placement.timeout-ms');
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
    await waitForStatus(client, id, 'CANCELLED');
    await stopWorker(narrow);
  });

  it('spreads the processes over the workers, shows the layout, and sends each process its own run-subtasks', async () => {
    const a = await startWorker(ids.a, 2);
    const b = await startWorker(ids.b, 2);
    b.autoRun = false; // process 2 reports STARTING until the test says otherwise
    const created = await client.post('/v1/deployments', { name: `spread-${run}`, bundleId, parallelism: { default: 1, operators: { counts: 3 } } });
    const id = created.body.id as string;

    // Three processes (counts is 3 wide): the two freest slots on a (lowest id of a tie), the third on b.
    const counts = (subtask: number, keyGroups: number[][]) => ({ operatorId: 'counts', subtask, keyGroups });
    const expected = [
      {
        index: 0,
        workerId: ids.a,
        subtasks: [
          { operatorId: 'words', subtask: 0, keyGroups: WHOLE },
          { operatorId: 'by-word', subtask: 0, keyGroups: WHOLE },
          counts(0, [[0, 10]]),
          { operatorId: 'out', subtask: 0, keyGroups: WHOLE },
        ],
      },
      { index: 1, workerId: ids.a, subtasks: [counts(1, [[11, 21]])] },
      { index: 2, workerId: ids.b, subtasks: [counts(2, [[22, 31]])] },
    ];
    await eventually('every process dispatched', async () => (b.commands('run-subtasks', id).length === 1 && a.commands('run-subtasks', id).length === 2 ? true : undefined));
    const starting = (await client.get(`/v1/deployments/${id}`)).body;
    expect(starting.status).toBe('STARTING');
    expect(starting.layout).toEqual({ runNo: 1, processes: expected });

    const sent = [...a.commands('run-subtasks', id), ...b.commands('run-subtasks', id)].sort((x, y) => x.process!.index - y.process!.index);
    expect(sent.map((c) => [c.idempotencyKey, c.process, c.runNo])).toEqual([
      [`${id}-run-1`, { index: 0, count: 3 }, 1],
      [`${id}-run-1-p1`, { index: 1, count: 3 }, 1],
      [`${id}-run-1-p2`, { index: 2, count: 3 }, 1],
    ]);
    for (const [i, c] of sent.entries()) {
      expect(c.parallelism).toEqual({ words: 1, 'by-word': 1, counts: 3, out: 1 });
      expect(c.subtasks).toEqual(expected[i].subtasks);
    }

    // Not RUNNING while one process still starts; RUNNING once every process runs all its subtasks.
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await client.get(`/v1/deployments/${id}`)).body.status).toBe('STARTING');
    b.set(id, 2, 'RUNNING');
    const running = await waitForStatus(client, id, 'RUNNING');
    expect(running.statusReason).toBe(`run 1: 6 subtasks running on 3 processes (0, 1 on worker ${ids.a}; 2 on worker ${ids.b}); started without state`);

    // The same layout over GraphQL, and the fleet view says which process runs each subtask.
    const query = `query ($id: ID!) { deployment(id: $id) { runNo layout { runNo processes { index workerId subtasks { operatorId subtask keyGroups { start end } } } } } }`;
    const res = await gql<{ deployment: { layout: { processes: { index: number; workerId: string; subtasks: { operatorId: string; keyGroups: { start: number; end: number }[] }[] }[] } } }>(
      cp.url,
      tenant.readKey,
      query,
      { id },
    );
    expect(res.body.errors).toBeUndefined();
    const processes = res.body.data!.deployment.layout.processes;
    expect(processes.map((p) => [p.index, p.workerId, p.subtasks.map((s) => `${s.operatorId}:${s.keyGroups.map((k) => `${k.start}-${k.end}`).join(',')}`)])).toEqual([
      [0, ids.a, ['words:0-31', 'by-word:0-31', 'counts:0-10', 'out:0-31']],
      [1, ids.a, ['counts:11-21']],
      [2, ids.b, ['counts:22-31']],
    ]);
    expect((await workerStatus(ids.b))?.runningSubtasks.map((s) => s.process)).toEqual([2]);
  });

  it('a LOST job host writes the run off, stops the survivors, and re-places the run once they left', async () => {
    const [a, b] = workers;
    const id = (await client.get('/v1/deployments?status=RUNNING')).body.items[0].id as string;
    a.stopDelayMs = 1_500; // the survivors take a while to stop: the next run must wait for them
    b.autoRun = true;
    b.set(id, 2, 'LOST');

    // While the survivors stop, the status says what it waits for.
    const waiting = await waitForDeployment(client, id, 'waiting for the survivors', (d) => d.statusReason.startsWith('waiting for run 1'));
    expect(waiting).toMatchObject({ status: 'RECOVERING', runNo: 1 });
    expect(waiting.statusReason).toBe(`waiting for run 1 to leave process 0 on worker ${ids.a}, process 1 on worker ${ids.a} before the next run starts`);
    const recovered = await waitForDeployment(client, id, 'run 2 running', (d) => d.status === 'RUNNING' && d.runNo === 2);
    expect(recovered.statusReason).toMatch(/^run 2: 6 subtasks running on 3 processes .*; restored the job's latest usable checkpoint$/);
    const transitions = (await client.get(`/v1/deployments/${id}/history`)).body.transitions as { to: string; reason: string }[];
    expect(transitions.map((t) => t.to)).toEqual(['CREATED', 'STARTING', 'RUNNING', 'RECOVERING', 'RUNNING']);
    expect(transitions[3].reason).toBe(
      `process 2 of run 1 on worker ${ids.b} was lost: its job host died without reporting a failure (killed, or out of memory): re-placing the job, restoring its latest checkpoint`,
    );

    // Every process of run 1 was told to stop, under its own key; a survivor is process 0 or 1 on a.
    const stops = (w: ProtocolWorker) => w.commands('stop-subtasks', id).map((c: StopSubtasks) => [c.idempotencyKey, c.process]);
    expect(stops(a)).toEqual([
      [`${id}-run-1-stop`, 0],
      [`${id}-run-1-p1-stop`, 1],
    ]);
    expect(stops(b)).toEqual([[`${id}-run-1-p2-stop`, 2]]);
    // Run 2 went out only after the survivors had left a's report.
    const firstRun2 = Math.min(...[...a.received, ...b.received].filter((r) => r.command.type === 'run-subtasks' && (r.command as RunSubtasks).runNo === 2).map((r) => r.at));
    expect(firstRun2).toBeGreaterThan(a.droppedAt.get(`${id}/0`)!);
    expect(firstRun2).toBeGreaterThan(a.droppedAt.get(`${id}/1`)!);
    const run2 = [...a.commands('run-subtasks', id), ...b.commands('run-subtasks', id)].filter((c) => c.runNo === 2);
    expect(run2.map((c) => c.restoreFrom?.snapshotId)).toEqual(['latest', 'latest', 'latest']);

    const history = await client.get(`/v1/deployments/${id}/history`);
    const [second, first] = history.body.runs as { runNo: number; outcome: string | null; endReason: string | null; slots: number; processes: unknown[] }[];
    expect(first).toMatchObject({ runNo: 1, outcome: 'LOST', slots: 3, endReason: expect.stringContaining(`process 2 of run 1 on worker ${ids.b} was lost`) });
    expect(first.processes).toHaveLength(3);
    expect(second).toMatchObject({ runNo: 2, outcome: null, slots: 3 });
  });

  it('a savepoint goes to process 0 only; a suspend stops every process with the same savepoint', async () => {
    const [a, b] = workers;
    a.stopDelayMs = 0;
    const id = (await client.get('/v1/deployments?status=RUNNING')).body.items[0].id as string;
    const trigger = await client.post(`/v1/deployments/${id}/savepoints`, { savepointId: `sp-${run}` });
    expect(trigger.status).toBeLessThan(300);
    await eventually('take-savepoint on process 0’s worker', async () => (a.commands('take-savepoint', id).length === 1 ? true : undefined));
    expect(b.commands('take-savepoint', id)).toEqual([]);

    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'SUSPENDED' })).status).toBe(200);
    const suspended = await waitForStatus(client, id, 'SUSPENDED');
    expect(suspended.statusReason).toMatch(new RegExp(`^run 2 stopped on workers ${ids.a}, ${ids.b}; a resume restores`));
    const suspendStops = [...a.commands('stop-subtasks', id), ...b.commands('stop-subtasks', id)].filter((c) => c.idempotencyKey.startsWith(`${id}-run-2`));
    expect(suspendStops.map((c) => c.process).sort()).toEqual([0, 1, 2]);
    expect(new Set(suspendStops.map((c) => c.savepoint?.snapshotId))).toEqual(new Set(['suspend-run-2']));
    expect((await client.get(`/v1/deployments/${id}`)).body.layout).toBeNull();
    expect((await client.patch(`/v1/deployments/${id}`, { desiredState: 'CANCELLED' })).status).toBe(200);
    await waitForStatus(client, id, 'CANCELLED');
  });
});

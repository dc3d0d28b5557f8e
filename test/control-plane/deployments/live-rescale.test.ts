/**
 * Live rescale, the control plane's side, against the real Postgres and Redis with stand-in workers made of the
 * protocol (ProtocolWorker): scaling out, the joiners get run-subtasks with `joining` before process 0's worker gets
 * rescale-run; the command's progress shows on the deployment; its report becomes the run's layout, in the same run.
 * Scaling in, the retirees are stopped only once the report is recorded. A refused rescale falls back to the restart;
 * one that asks for more slots than the fleet has says so, then gives up and runs on as it was.
 */
import type { RescaleReport, RescaleRun, RunSubtasks } from '@weir/protocol';
import { describe, expect, it } from 'vitest';
import { eventually } from '../support/control-plane';
import { contiguous, movesFixture } from './moves-fixture';
import type { ProtocolWorker } from './protocol-worker';
import { waitForDeployment, waitForStatus, type DeploymentBody } from './support';

interface RescaleBody {
  rescaleId: string;
  runNo: number;
  state: string;
  fromProcesses: number;
  toProcesses: number;
  moved: number;
  total: number;
  reason: string;
}
type Deployment = DeploymentBody & {
  parallelism: { default: number; operators: Record<string, number> };
  pendingParallelism: unknown;
  rescale: RescaleBody | null;
  layout: { runNo: number; processes: { index: number; workerId: string }[] } | null;
};

const ROUTING_AT_1 = contiguous(1);

/** What process 0 of a rescale to `counts` at n reports: even contiguous shares, every key group that changed owner moved. */
function reportFor(command: RescaleRun, from: number): RescaleReport {
  const n = command.parallelism.counts;
  const before = contiguous(from);
  const after = contiguous(n);
  const moved = after.flatMap((to, kg) => (to === before[kg] ? [] : [{ operatorId: 'counts', keyGroup: kg, fromSubtask: before[kg], toSubtask: to, bytes: 10, pauseMs: 1 }]));
  return { rescaleId: command.rescaleId, processes: command.processes, parallelism: { ...command.parallelism }, routing: { counts: after }, moved, durationMs: 20 };
}

/** A rescale handler that publishes `moved` of the report's total, then waits for `release` before answering. */
function holdRescale(w: ProtocolWorker, from: number, moved: number) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let answeredAt = 0;
  w.onRescale = async (command, context) => {
    const report = reportFor(command, from);
    await context.progress({ moved, total: report.moved.length });
    await released;
    answeredAt = Date.now();
    return report;
  };
  return { release, answeredAt: () => answeredAt };
}

describe('live rescale', { timeout: 180_000 }, () => {
  const f = movesFixture('lrs');
  const workers: ProtocolWorker[] = [];
  let id: string;
  const get = async (deploymentId = id) => (await f.client.get(`/v1/deployments/${deploymentId}`)).body as Deployment;
  const runCommands = (runNo: number): RunSubtasks[] =>
    workers.flatMap((w) => w.commands('run-subtasks', id)).filter((c) => c.runNo === runNo);
  const stopsOf = (w: ProtocolWorker) => w.received.filter((r) => r.command.type === 'stop-subtasks' && r.command.jobId === id);

  it('scales out 2 → 4 live: joiners first, then rescale-run to process 0; progress shown; the report is the run’s layout', async () => {
    workers.push(await f.startWorker('a', 2), await f.startWorker('b', 2));
    const [a, b] = workers;
    id = await f.deployRunning('out', 2);
    expect((await get()).layout?.processes.map((p) => p.workerId)).toEqual([a.id, a.id]);
    const held = holdRescale(a, 2, 4);

    expect((await f.client.patch(`/v1/deployments/${id}`, { parallelism: { operators: { counts: 4 } } })).status).toBe(200);
    const moving = await waitForDeployment(f.client, id, 'RESCALING with progress', (d) => (d as Deployment).rescale?.moved === 4);
    const rescale = (moving as Deployment).rescale!;
    expect(moving.status).toBe('RESCALING');
    expect(rescale).toMatchObject({ runNo: 1, state: 'MOVING', fromProcesses: 2, toProcesses: 4, moved: 4, total: 24 });
    expect(moving.statusReason).toBe(`live rescale ${rescale.rescaleId} (2 → 4 processes): moving key groups: 4 of 24 moved`);
    // The joiners are in the layout already, on the worker with free slots, and the run is still run 1.
    expect((moving as Deployment).layout).toMatchObject({ runNo: 1, processes: [{ workerId: a.id }, { workerId: a.id }, { workerId: b.id }, { workerId: b.id }] });

    const joiners = b.commands('run-subtasks', id);
    expect(joiners.map((c) => c.process)).toEqual([
      { index: 2, count: 4 },
      { index: 3, count: 4 },
    ]);
    for (const c of joiners) {
      expect(c).toMatchObject({ runNo: 1, parallelism: { words: 1, 'by-word': 1, counts: 4, out: 1 }, joining: { parallelism: { words: 1, 'by-word': 1, counts: 2, out: 1 } } });
      expect(c.routing).toEqual({ words: ROUTING_AT_1, 'by-word': ROUTING_AT_1, counts: contiguous(2), out: ROUTING_AT_1 });
      expect(c.subtasks).toEqual([{ operatorId: 'counts', subtask: c.process!.index, keyGroups: [] }]);
      expect(c.restoreFrom).toBeUndefined();
      expect(c.idempotencyKey).toBe(`${id}-run-1-p${c.process!.index}-${rescale.rescaleId}`);
    }
    const rescaleCommands = a.received.filter((r) => r.command.type === 'rescale-run');
    expect(rescaleCommands.map((r) => r.command)).toEqual([
      expect.objectContaining({ runNo: 1, rescaleId: rescale.rescaleId, processes: 4, parallelism: { words: 1, 'by-word': 1, counts: 4, out: 1 }, idempotencyKey: `${id}-rescale-${rescale.rescaleId}` }),
    ]);
    // Joiners first: their commands were issued before the rescale-run (on two workers' queues, the order they are
    // received in may differ by a few ms under load; on one worker, a job's commands run in the order sent).
    const joinersIssuedAt = b.received.filter((r) => r.command.type === 'run-subtasks').map((r) => r.command.issuedAt);
    expect(Math.max(...joinersIssuedAt)).toBeLessThanOrEqual(rescaleCommands[0].command.issuedAt);

    held.release();
    const done = (await waitForStatus(f.client, id, 'RUNNING')) as Deployment;
    expect(done.runNo).toBe(1);
    expect(done.statusReason).toMatch(new RegExp(`^live rescale 2 → 4 processes done in [0-9.]+ s: 24 key groups moved \\(${rescale.rescaleId}\\); run 1 on 4 processes`));
    const after = await get();
    expect(after).toMatchObject({ parallelism: { default: 1, operators: { counts: 4 } }, pendingParallelism: null, rescale: { state: 'DONE', moved: 24, total: 24 } });
    expect(await f.countsLayout(id)).toEqual([[[0, 7]], [[8, 15]], [[16, 23]], [[24, 31]]]);
    // Nothing was stopped or restarted: one run, its two first processes sent once.
    expect(runCommands(1)).toHaveLength(4);
    expect(workers.flatMap(stopsOf)).toEqual([]);
  });

  it('scales in 4 → 2 live: the retirees are stopped only once the report is recorded', async () => {
    const [a, b] = workers;
    const first = (await get()).rescale!.rescaleId;
    const held = holdRescale(a, 4, 0);
    expect((await f.client.patch(`/v1/deployments/${id}`, { parallelism: { operators: { counts: 2 } } })).status).toBe(200);
    await waitForDeployment(f.client, id, 'RESCALING, moving', (d) => d.status === 'RESCALING' && (d as Deployment).rescale?.state === 'MOVING');
    const rescale = (await get()).rescale!;
    expect(rescale).toMatchObject({ fromProcesses: 4, toProcesses: 2 });
    // No joiner, and the retirees still run while process 0 moves key groups off them.
    expect(b.commands('run-subtasks', id)).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(stopsOf(b)).toEqual([]);
    expect(b.reported(id)).toHaveLength(2);

    held.release();
    const done = (await waitForStatus(f.client, id, 'RUNNING')) as Deployment;
    expect(done.runNo).toBe(1);
    expect(done.statusReason).toMatch(/^live rescale 4 → 2 processes done in [0-9.]+ s: 24 key groups moved, 2 retired processes stopped/);
    const stops = stopsOf(b);
    expect(stops.map((r) => r.command)).toEqual([
      expect.objectContaining({ process: 2, idempotencyKey: `${id}-run-1-p2-${first}-stop`, subtasks: [{ operatorId: 'counts', subtask: 2 }] }),
      expect.objectContaining({ process: 3, idempotencyKey: `${id}-run-1-p3-${first}-stop`, subtasks: [{ operatorId: 'counts', subtask: 3 }] }),
    ]);
    for (const s of stops) expect(s.at).toBeGreaterThanOrEqual(held.answeredAt());
    expect(stopsOf(a)).toEqual([]);
    expect(await f.countsLayout(id)).toEqual([[[0, 15]], [[16, 31]]]);
    expect((await get()).layout?.processes).toHaveLength(2);
    await eventually('the retirees gone from the report', async () => (b.reported(id).length === 0 ? true : undefined));
  });

  it('falls back to the restart when process 0 refuses the rescale', async () => {
    const [a, b] = workers;
    a.onRescale = null;
    // This case's own answer, not what the deployment still shows of the case before: the next run, after a rescale
    // other than the one it shows now (a run and a rescale left over from a case before would otherwise match at once).
    const before = await get();
    expect((await f.client.patch(`/v1/deployments/${id}`, { parallelism: { operators: { counts: 4 } } })).status).toBe(200);
    const restarted = (await waitForDeployment(
      f.client,
      id,
      `run ${before.runNo + 1} running after a rescale other than ${before.rescale?.rescaleId}`,
      (d) => d.status === 'RUNNING' && d.runNo === before.runNo + 1 && (d as Deployment).rescale?.rescaleId !== before.rescale?.rescaleId,
    )) as Deployment;
    const rescale = restarted.rescale!;
    const [runNo, nextRunNo] = [before.runNo, before.runNo + 1];
    expect(rescale.state).toBe('FELL_BACK');
    expect(rescale.reason).toBe(`process 0's worker ${a.id} refused it: this stand-in worker does not rescale runs live`);
    expect(restarted.statusReason).toMatch(new RegExp(`^live rescale ${rescale.rescaleId} fell back to a restart \\(process 0's worker .* refused it: .*\\); run ${nextRunNo}: `));
    expect(restarted.parallelism.operators.counts).toBe(4);
    // The joiners of this rescale reused indexes 2 and 3 under keys of their own, and were stopped with the run.
    const joiners = b.commands('run-subtasks', id).filter((c) => c.joining);
    expect(joiners.slice(-2).map((c) => c.idempotencyKey)).toEqual([`${id}-run-${runNo}-p2-${rescale.rescaleId}`, `${id}-run-${runNo}-p3-${rescale.rescaleId}`]);
    expect(stopsOf(b).map((r) => r.command.idempotencyKey)).toEqual(
      expect.arrayContaining([`${id}-run-${runNo}-p2-${rescale.rescaleId}-stop`, `${id}-run-${runNo}-p3-${rescale.rescaleId}-stop`]),
    );
    const second = runCommands(nextRunNo);
    expect(second).toHaveLength(4);
    for (const c of second) expect(c.restoreFrom?.snapshotId).toBe('latest');
    expect(await f.countsLayout(id)).toEqual([[[0, 7]], [[8, 15]], [[16, 23]], [[24, 31]]]);
  });

  it('says when the fleet lacks the joiners’ slots, then gives the rescale up and runs on as it was', async () => {
    // The fleet is full (the first deployment holds a and b); a third worker has room for a second deployment only.
    workers.push(await f.startWorker('c', 2));
    const created = await f.client.post('/v1/deployments', {
      name: `small-${f.run}`,
      bundleId: f.bundleId,
      parallelism: { default: 1, operators: { counts: 2 } },
      config: { properties: { 'placement.timeout-ms': '3000' } },
    });
    expect(created.status).toBe(201);
    const small = created.body.id as string;
    await waitForStatus(f.client, small, 'RUNNING');
    expect((await f.client.patch(`/v1/deployments/${small}`, { parallelism: { operators: { counts: 4 } } })).status).toBe(200);
    const waiting = (await waitForDeployment(f.client, small, 'waiting for slots', (d) => /waiting for 2 free slots/.test(d.statusReason))) as Deployment;
    expect(waiting.status).toBe('RESCALING');
    expect(waiting.statusReason).toMatch(/: waiting for 2 free slots: the fleet has 0 free on 3 live workers for 2 joining processes; given up at /);
    expect(waiting.rescale?.state).toBe('PENDING');

    const gaveUp = (await waitForStatus(f.client, small, 'RUNNING', 20_000)) as Deployment;
    expect(gaveUp.runNo).toBe(1);
    expect(gaveUp.statusReason).toMatch(/given up: no slots for its 2 joining processes within 3 s \(waiting for 2 free slots: .*\); the job runs on at its parallelism, and the change is dropped/);
    const after = await get(small);
    expect(after).toMatchObject({ parallelism: { default: 1, operators: { counts: 2 } }, pendingParallelism: null, rescale: { state: 'FAILED' } });
    expect(after.layout?.processes).toHaveLength(2);
    expect(workers.flatMap((w) => w.commands('rescale-run', small))).toEqual([]);
  });
});

/**
 * Key-group moves across runs and control-plane restarts, against the real Postgres and Redis with stand-in workers
 * made of the protocol: run-subtasks carries the run's routing (every operator, one owner per key group); a recovery
 * starts with the routing moves left, a rescale re-plans it; a move whose run ends first is FAILED and the next run
 * starts with the routing before it (a report read late changes nothing); a move whose command finished while no
 * control plane ran is settled by the next one, and a PENDING move whose command is not on the queue is sent again.
 */
import { createPool, withTenant } from '@weir/db';
import type { MoveReport, RunSubtasks } from '@weir/protocol';
import { describe, expect, it } from 'vitest';
import { newMoveId } from '../../../apps/control-plane/src/moves/key-group-move';
import { eventually } from '../support/control-plane';
import { contiguous, movesFixture, type MoveBody } from './moves-fixture';
import { reportOf, type ProtocolWorker } from './protocol-worker';
import { waitForDeployment } from './support';

describe('key-group moves across runs', { timeout: 180_000 }, () => {
  const f = movesFixture('kgr');
  const workers: ProtocolWorker[] = [];
  let id: string;
  const runCommands = (runNo: number): RunSubtasks[] =>
    workers.flatMap((w) => w.commands('run-subtasks', id)).filter((c) => c.runNo === runNo).sort((x, y) => x.process!.index - y.process!.index);
  const move = async (keyGroup: number, toSubtask: number): Promise<MoveBody> => {
    const res = await f.client.post(`/v1/deployments/${id}/key-group-moves`, { operatorId: 'counts', moves: [{ keyGroup, toSubtask }] });
    expect(res.status).toBe(202);
    return res.body as MoveBody;
  };
  const received = (w: ProtocolWorker, moveId: string) => w.commands('move-key-groups', id).filter((c) => c.moveId === moveId);
  const hold = (w: ProtocolWorker) => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let answered!: () => void;
    const done = new Promise<void>((resolve) => (answered = resolve));
    w.onMove = async (command): Promise<MoveReport> => {
      await held;
      setImmediate(answered);
      return reportOf(command);
    };
    return { release, done };
  };

  it('carries the routing in run-subtasks; a recovery keeps the moves made, a rescale re-plans', async () => {
    workers.push(await f.startWorker('a', 1), await f.startWorker('b', 1));
    const [a, b] = workers;
    id = await f.deployRunning('runs', 2);
    const first = runCommands(1);
    expect(first.map((c) => c.process)).toEqual([
      { index: 0, count: 2 },
      { index: 1, count: 2 },
    ]);
    for (const c of first) expect(c.routing).toEqual({ words: contiguous(1), 'by-word': contiguous(1), counts: contiguous(2), out: contiguous(1) });

    const done = await f.waitForMove(id, (await move(0, 1)).moveId, (m) => m.state === 'DONE', 'DONE');
    await f.waitForMove(id, (await move(31, 0)).moveId, (m) => m.state === 'DONE', 'DONE');
    expect(done.runNo).toBe(1);

    // Process 1's job host dies: run 2 restores the latest checkpoint, with the routing the moves left.
    b.set(id, 1, 'LOST');
    await waitForDeployment(f.client, id, 'run 2 running', (d) => d.status === 'RUNNING' && d.runNo === 2);
    const moved = contiguous(2).map((owner, kg) => (kg === 0 ? 1 : kg === 31 ? 0 : owner));
    const second = runCommands(2);
    expect(second).toHaveLength(2);
    for (const c of second) expect(c.routing?.counts).toEqual(moved);
    expect(second.map((c) => c.subtasks.find((s) => s.operatorId === 'counts')?.keyGroups)).toEqual([
      [
        [1, 15],
        [31, 31],
      ],
      [
        [0, 0],
        [16, 30],
      ],
    ]);
    expect(await f.countsLayout(id)).toEqual(second.map((c) => c.subtasks.find((s) => s.operatorId === 'counts')?.keyGroups));

    // A rescale by restart re-plans the operator it rescales: contiguous ranges over three subtasks.
    workers.push(await f.startWorker('c', 1));
    expect((await f.client.patch(`/v1/deployments/${id}`, { parallelism: { operators: { counts: 3 } }, rescaleMode: 'restart' })).status).toBe(200);
    await waitForDeployment(f.client, id, 'run 3 running', (d) => d.status === 'RUNNING' && d.runNo === 3);
    const third = runCommands(3);
    expect(third).toHaveLength(3);
    for (const c of third) expect(c.routing).toEqual({ words: contiguous(1), 'by-word': contiguous(1), counts: contiguous(3), out: contiguous(1) });
    expect(a.commands('run-subtasks', id)).toHaveLength(3);
  });

  it('records FAILED a move whose run ends before it completes; the next run starts with the routing before it', async () => {
    const [a, , c] = workers;
    const held = hold(a);
    const pending = await move(0, 2);
    await eventually('the move on process 0’s worker', async () => (received(a, pending.moveId).length ? true : undefined));

    // Process 2's job host dies while process 0 is moving: the run is written off.
    c.set(id, 2, 'LOST');
    const failed = await f.waitForMove(id, pending.moveId, (m) => m.state === 'FAILED', 'FAILED');
    expect(failed.failure).toBe(`run 3 ended before the move completed (LOST: process 2 of run 3 on worker ${c.id} was lost: its job host died without reporting a failure (killed, or out of memory))`);

    // The worker answers late (its queue was busy with the move: the stop waited behind it); nothing changes.
    held.release();
    await held.done;
    await waitForDeployment(f.client, id, 'run 4 running', (d) => d.status === 'RUNNING' && d.runNo === 4);
    for (const cmd of runCommands(4)) expect(cmd.routing?.counts).toEqual(contiguous(3));
    expect((await f.client.get(`/v1/deployments/${id}/key-group-moves/${pending.moveId}`)).body.state).toBe('FAILED');
  });

  it('survives a control-plane restart: settles a command that finished meanwhile, resends one missing from the queue', async () => {
    const [a] = workers;
    // A move in flight on the worker when the control plane goes; the worker finishes it while none runs.
    const held = hold(a);
    const inFlight = await move(0, 1);
    await eventually('the move on process 0’s worker', async () => (received(a, inFlight.moveId).length ? true : undefined));
    await f.restartControlPlane(async () => {
      held.release();
      await held.done;
    });
    const done = await f.waitForMove(id, inFlight.moveId, (m) => m.state === 'DONE', 'DONE after the restart');
    expect(done.report?.moved.map((m) => [m.keyGroup, m.toSubtask])).toEqual([[0, 1]]);
    expect(received(a, inFlight.moveId)).toHaveLength(1);

    // A PENDING move recorded as sent whose command is not on the queue (Redis lost it): sent again, then DONE.
    a.onMove = async (command) => reportOf(command);
    const moveId = newMoveId();
    const pool = createPool({ connectionString: f.config.WEIR_PG_URL, max: 1 });
    try {
      await withTenant(pool, f.tenant.tenantId, async (client) => {
        await client.query(
          `INSERT INTO deployment_key_group_moves (tenant_id, deployment_id, move_id, run_no, operator_id, moves, requested_by, started_at)
           VALUES ($1, $2, $3, 4, 'counts', $4, 'test', now() - interval '1 minute')`,
          [f.tenant.tenantId, id, moveId, JSON.stringify([{ keyGroup: 21, fromSubtask: 1, toSubtask: 2 }])],
        );
        await client.query('UPDATE deployments SET next_reconcile_at = now() WHERE id = $1', [id]);
      });
    } finally {
      await pool.end();
    }
    const resent = await f.waitForMove(id, moveId, (m) => m.state === 'DONE', 'DONE after the resend');
    expect(resent.report?.moved).toEqual([{ keyGroup: 21, fromSubtask: 1, toSubtask: 2, bytes: 100, pauseMs: 1 }]);
    expect(received(a, moveId)).toHaveLength(1);
    const owners = contiguous(3).map((o, kg) => (kg === 0 ? 1 : kg === 21 ? 2 : o));
    expect(await f.countsLayout(id)).toEqual([0, 1, 2].map((s) => rangesOf(owners, s)));
  });
});

function rangesOf(owners: number[], subtask: number): number[][] {
  const out: number[][] = [];
  owners.forEach((o, kg) => {
    if (o !== subtask) return;
    const last = out[out.length - 1];
    if (last && last[1] === kg - 1) last[1] = kg;
    else out.push([kg, kg]);
  });
  return out;
}

/**
 * Live key-group moves through the control plane, against the real Postgres and Redis with stand-in workers made of
 * the protocol: a move is checked against the running run (each bad field a 400 naming it; 409 when not RUNNING or
 * another is in flight), recorded PENDING with each key group's owner, sent to process 0's worker only under its one
 * key, DONE with the worker's report (the layout over REST and GraphQL follows the new routing) or FAILED with the
 * worker's reason; Idempotency-Key replays the first answer; GraphQL lists them and pushes them.
 */
import { CommandRejectedError, type MoveKeyGroups } from '@weir/protocol';
import { describe, expect, it } from 'vitest';
import { RedisPubSub } from '../../../apps/control-plane/src/events/redis-pubsub';
import { eventually } from '../support/control-plane';
import { collect, connectWs, gql } from '../graphql/support';
import { movesFixture, type MoveBody } from './moves-fixture';
import { reportOf, type ProtocolWorker } from './protocol-worker';
import { waitForStatus } from './support';

describe('key-group moves: the API', { timeout: 120_000 }, () => {
  const f = movesFixture('kgm');
  let a: ProtocolWorker;
  let b: ProtocolWorker;
  let id: string;
  const post = (body: unknown, headers?: Record<string, string>) => f.client.post(`/v1/deployments/${id}/key-group-moves`, body, headers);
  const problemsOf = (res: { body: Record<string, unknown> }) => (res.body.errors as { name: string; reason: string }[]).map((e) => `${e.name}: ${e.reason}`);

  it('refuses a bad move with a 400 naming each field, and a deployment that does not run with a 409', async () => {
    // Ids sort a < b: with one free slot each, process 0 lands on a, process 1 on b.
    a = await f.startWorker('a', 1);
    b = await f.startWorker('b', 1);
    id = await f.deployRunning('moves', 2);

    expect(problemsOf(await post({ operatorId: 'nope', moves: [{ keyGroup: 0, toSubtask: 1 }] }))).toEqual([
      'operatorId: is not an operator of bundle word-count@1.0.0 (operators: words, by-word, counts, out)',
    ]);
    const bad = await post({
      operatorId: 'counts',
      moves: [
        { keyGroup: 32, toSubtask: 1 },
        { keyGroup: 3, toSubtask: 2 },
        { keyGroup: 20, toSubtask: 1 },
        { keyGroup: 4, toSubtask: 1 },
        { keyGroup: 4, toSubtask: 1 },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.type).toBe('urn:weir:problem:invalid-request');
    expect(problemsOf(bad)).toEqual([
      'moves.0.keyGroup: key group 32 does not exist: bundle word-count@1.0.0 has 32 key groups (0 to 31)',
      'moves.1.toSubtask: operator counts runs 2 subtasks (0 to 1), so there is no subtask 2',
      'moves.2.toSubtask: key group 20 of operator counts is on subtask 1 already',
      'moves.4.keyGroup: key group 4 is moved by moves.3 already; name each key group once',
    ]);
    expect(problemsOf(await post({ operatorId: 'counts', moves: [] }))).toEqual(['moves: must move at least one key group']);
    expect((await f.client.post(`/v1/deployments/d${'0'.repeat(24)}/key-group-moves`, { operatorId: 'counts', moves: [{ keyGroup: 0, toSubtask: 1 }] })).status).toBe(404);

    const resting = await f.client.post('/v1/deployments', { name: `resting-${f.run}`, bundleId: f.bundleId, desiredState: 'SUSPENDED' });
    await waitForStatus(f.client, resting.body.id as string, 'SUSPENDED');
    const notRunning = await f.client.post(`/v1/deployments/${resting.body.id}/key-group-moves`, { operatorId: 'counts', moves: [{ keyGroup: 0, toSubtask: 0 }] });
    expect(notRunning.status).toBe(409);
    expect(notRunning.body).toMatchObject({ type: 'urn:weir:problem:deployment-not-running', detail: `deployment ${resting.body.id} is SUSPENDED: key groups move only while it is RUNNING` });

    // Nothing was recorded, nothing sent.
    expect((await f.client.get(`/v1/deployments/${id}/key-group-moves`)).body).toEqual({ items: [], nextCursor: null });
    expect([...a.commands('move-key-groups'), ...b.commands('move-key-groups')]).toEqual([]);
  });

  it('records a move PENDING, sends it to process 0’s worker under its key, and records it DONE with the report; the layout follows', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    a.onMove = async (command) => {
      await held;
      return reportOf(command, 12);
    };
    const body = { operatorId: 'counts', moves: [{ keyGroup: 0, toSubtask: 1 }, { keyGroup: 1, toSubtask: 1 }, { keyGroup: 20, toSubtask: 0 }], reason: 'balance the test' };
    const key = { 'idempotency-key': `move-${f.run}` };
    const accepted = await post(body, key);
    expect(accepted.status).toBe(202);
    const move = accepted.body as MoveBody;
    expect(move).toMatchObject({
      deploymentId: id,
      runNo: 1,
      operatorId: 'counts',
      state: 'PENDING',
      reason: 'balance the test',
      requestedBy: expect.any(String),
      moves: [
        { keyGroup: 0, fromSubtask: 0, toSubtask: 1 },
        { keyGroup: 1, fromSubtask: 0, toSubtask: 1 },
        { keyGroup: 20, fromSubtask: 1, toSubtask: 0 },
      ],
      report: null,
      failure: null,
      finishedAt: null,
    });
    expect(move.moveId).toMatch(/^m[0-9a-f]{24}$/);

    // The same request again is the same answer; another move while this one is in flight is a 409.
    const replay = await post(body, key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(accepted.body);
    const second = await post({ operatorId: 'counts', moves: [{ keyGroup: 2, toSubtask: 1 }] });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ type: 'urn:weir:problem:key-group-move-in-flight', detail: expect.stringContaining(move.moveId) });

    const sent = await eventually('the move on process 0’s worker', async () => a.commands('move-key-groups', id)[0]);
    expect(sent).toMatchObject({
      idempotencyKey: `${id}-move-${move.moveId}`,
      tenantId: f.tenant.tenantId,
      jobId: id,
      runNo: 1,
      moveId: move.moveId,
      operatorId: 'counts',
      moves: move.moves,
      reason: 'balance the test',
    } satisfies Partial<MoveKeyGroups>);
    expect(b.commands('move-key-groups')).toEqual([]);
    expect((await f.waitForMove(id, move.moveId, (m) => m.startedAt !== null, 'started')).state).toBe('PENDING');

    release();
    const done = await f.waitForMove(id, move.moveId, (m) => m.state === 'DONE', 'DONE');
    expect(done.report).toEqual({ moved: move.moves.map((m) => ({ ...m, bytes: 100, pauseMs: 1 })), durationMs: 12 });
    expect(Date.parse(done.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(done.startedAt!));
    expect(done.failure).toBeNull();
    expect(a.commands('move-key-groups', id)).toHaveLength(1);

    // The layout over REST shows the key groups where they are now.
    expect(await f.countsLayout(id)).toEqual([
      [
        [2, 15],
        [20, 20],
      ],
      [
        [0, 1],
        [16, 19],
        [21, 31],
      ],
    ]);
  });

  it('records a move the worker refuses FAILED with its reason, and lists moves newest first', async () => {
    a.onMove = async () => {
      throw new CommandRejectedError('move failed: key group 5 did not move: adopting it: disk full');
    };
    const accepted = await post({ operatorId: 'counts', moves: [{ keyGroup: 5, toSubtask: 1 }] });
    expect(accepted.status).toBe(202);
    const failed = await f.waitForMove(id, accepted.body.moveId as string, (m) => m.state === 'FAILED', 'FAILED');
    expect(failed.failure).toBe(`process 0's worker ${a.id} refused or failed it: move failed: key group 5 did not move: adopting it: disk full`);
    expect(failed.report).toBeNull();
    // A FAILED move leaves the routing as it was.
    expect((await f.countsLayout(id))[0]).toEqual([
      [2, 15],
      [20, 20],
    ]);

    const page = await f.client.get(`/v1/deployments/${id}/key-group-moves?limit=1`);
    expect(page.body.items.map((m: MoveBody) => [m.moveId, m.state])).toEqual([[failed.moveId, 'FAILED']]);
    const rest = await f.client.get(`/v1/deployments/${id}/key-group-moves?limit=1&cursor=${page.body.nextCursor}`);
    expect(rest.body.items.map((m: MoveBody) => m.state)).toEqual(['DONE']);
    expect(rest.body.nextCursor).toBeNull();
    expect((await f.client.get(`/v1/deployments/${id}/key-group-moves/m${'0'.repeat(24)}`)).status).toBe(404);
    expect((await f.client.get(`/v1/deployments/${id}/key-group-moves/nope`)).status).toBe(400);
  });

  it('GraphQL lists a deployment’s moves, reads one, and pushes each as it is requested and settled', async () => {
    a.onMove = async (command) => reportOf(command);
    const res = await gql<{ deployment: { keyGroupMoves: { items: { moveId: string; state: string; report: { moved: { keyGroup: number; bytes: number }[] } | null }[] } } }>(
      f.cp.url,
      f.tenant.readKey,
      'query ($id: ID!) { deployment(id: $id) { keyGroupMoves { items { moveId state report { moved { keyGroup bytes } } } } } }',
      { id },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data!.deployment.keyGroupMoves.items.map((m) => m.state)).toEqual(['FAILED', 'DONE']);
    expect(res.body.data!.deployment.keyGroupMoves.items[1].report!.moved.map((m) => m.keyGroup)).toEqual([0, 1, 20]);

    const conn = connectWs(f.cp.url, `Bearer ${f.tenant.readKey}`);
    await conn.connected;
    const sub = collect<{ keyGroupMoves: { moveId: string; state: string; moves: { keyGroup: number; fromSubtask: number }[]; report: { durationMs: number } | null } }>(
      conn.client,
      'subscription ($id: ID!) { keyGroupMoves(deploymentId: $id) { moveId state moves { keyGroup fromSubtask } report { durationMs } } }',
      { id },
    );
    try {
      await eventually('the subscription live', async () => (f.cp.app.get(RedisPubSub).channelCount >= 1 ? true : undefined));
      const accepted = await post({ operatorId: 'counts', moves: [{ keyGroup: 6, toSubtask: 1 }] });
      const pending = await sub.next();
      const done = await sub.next();
      expect(pending.keyGroupMoves).toEqual({ moveId: accepted.body.moveId, state: 'PENDING', moves: [{ keyGroup: 6, fromSubtask: 0 }], report: null });
      expect(done.keyGroupMoves).toEqual({ moveId: accepted.body.moveId, state: 'DONE', moves: [{ keyGroup: 6, fromSubtask: 0 }], report: { durationMs: 5 } });
      expect(sub.errors).toEqual([]);

      const one = await gql<{ keyGroupMove: { state: string; requestedBy: string } }>(
        f.cp.url,
        f.tenant.readKey,
        'query ($d: ID!, $m: ID!) { keyGroupMove(deploymentId: $d, moveId: $m) { state requestedBy } }',
        { d: id, m: accepted.body.moveId },
      );
      expect(one.body.data?.keyGroupMove.state).toBe('DONE');
    } finally {
      sub.dispose();
      await conn.client.dispose();
    }
  });
});

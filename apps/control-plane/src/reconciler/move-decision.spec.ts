import { describe, expect, it } from 'vitest';
import type { DeploymentRun } from '../deployments/deployment';
import type { KeyGroupMove } from '../moves/key-group-move';
import { decideMove, MOVE_COMMAND_KEPT_MS, type MoveFacts } from './move-decision';

const now = new Date('2025-12-01T12:00:00Z');
const move: KeyGroupMove = {
  tenantId: 't',
  deploymentId: 'd',
  moveId: 'm1',
  runNo: 3,
  operatorId: 'totals',
  moves: [
    { keyGroup: 0, fromSubtask: 0, toSubtask: 1 },
    { keyGroup: 1, fromSubtask: 0, toSubtask: 1 },
  ],
  reason: '',
  requestedBy: 'k1',
  state: 'PENDING',
  report: null,
  failure: null,
  requestedAt: now,
  startedAt: null,
  finishedAt: null,
};
const run = { runNo: 3, workerId: 'w1', endedAt: null, outcome: null, endReason: null } as unknown as DeploymentRun;
const ended = { ...run, endedAt: now, outcome: 'LOST', endReason: 'worker w2 is no longer alive (LOST) while hosting process 1 of run 3' } as DeploymentRun;
const report = {
  moveId: 'm1',
  operatorId: 'totals',
  moved: [
    { keyGroup: 0, fromSubtask: 0, toSubtask: 1, bytes: 120, pauseMs: 4 },
    { keyGroup: 1, fromSubtask: 0, toSubtask: 1, bytes: 80, pauseMs: 3 },
  ],
  durationMs: 40,
};
const facts = (f: Partial<MoveFacts>): MoveFacts => ({ move, moveRun: run, latestRunNo: 3, command: { kind: 'missing' }, now, ...f });

describe('decideMove', () => {
  it('sends a move whose command is not on the queue while its run is open (first send, or a resend after a crash or a lost Redis)', () => {
    expect(decideMove(facts({}))).toEqual({ kind: 'send' });
    expect(decideMove(facts({ move: { ...move, startedAt: new Date(now.getTime() - 60_000) } }))).toEqual({ kind: 'send' });
  });

  it('waits while the command is queued or running, and while Redis does not answer', () => {
    expect(decideMove(facts({ command: { kind: 'queued' } }))).toEqual({ kind: 'wait' });
    expect(decideMove(facts({ command: null }))).toEqual({ kind: 'wait' });
  });

  it('is DONE with the worker’s report while its run is the latest, even once that run ended', () => {
    expect(decideMove(facts({ command: { kind: 'completed', result: report } }))).toEqual({ kind: 'done', report });
    expect(decideMove(facts({ moveRun: ended, command: { kind: 'completed', result: report } }))).toEqual({ kind: 'done', report });
  });

  it('is FAILED with the worker’s reason when the worker refused it or it failed half-way', () => {
    expect(decideMove(facts({ command: { kind: 'failed', reason: 'move m1 failed: key group 0 did not move: adopting it: boom' } }))).toEqual({
      kind: 'failed',
      failure: "process 0's worker w1 refused or failed it: move m1 failed: key group 0 did not move: adopting it: boom",
    });
  });

  it('is FAILED when its run ended before it completed, naming how the run ended', () => {
    for (const command of [{ kind: 'queued' } as const, { kind: 'missing' } as const, null]) {
      expect(decideMove(facts({ moveRun: ended, command }))).toEqual({
        kind: 'failed',
        failure: 'run 3 ended before the move completed (LOST: worker w2 is no longer alive (LOST) while hosting process 1 of run 3)',
      });
    }
    expect(decideMove(facts({ moveRun: null, latestRunNo: 4 }))).toEqual({ kind: 'failed', failure: 'run 3 ended before the move completed' });
  });

  it('is FAILED when a report arrives after a later run was placed (that run started with the routing before it)', () => {
    expect(decideMove(facts({ moveRun: ended, latestRunNo: 4, command: { kind: 'completed', result: report } }))).toEqual({
      kind: 'failed',
      failure: "run 3 was replaced by run 4 before the move's report was read; run 4 started with the routing before it",
    });
  });

  it('refuses a report that does not answer this move', () => {
    const bad = (result: unknown) => decideMove(facts({ command: { kind: 'completed', result } }));
    expect(bad(undefined)).toEqual({ kind: 'failed', failure: "process 0's worker w1 answered with a result that is not a move report" });
    expect(bad({ ...report, moveId: 'm0' })).toMatchObject({ failure: expect.stringContaining('the report of another move (m0 of totals)') });
    expect(bad({ ...report, moved: [{ ...report.moved[0], toSubtask: 0 }] })).toMatchObject({ failure: expect.stringContaining('moving key group 0 to subtask 0') });
  });

  it('gives up on a command gone from the queue long after it was sent rather than moving key groups twice', () => {
    const old = { ...move, startedAt: new Date(now.getTime() - MOVE_COMMAND_KEPT_MS - 3600_000) };
    expect(decideMove(facts({ move: old }))).toEqual({
      kind: 'failed',
      failure: "its command is no longer on worker w1's queue, 21 h after it was sent: its outcome is unknown",
    });
    expect(decideMove(facts({ move: old, command: { kind: 'queued' } }))).toEqual({ kind: 'wait' });
  });
});

import { describe, expect, it } from 'vitest';
import { InvalidRequestProblem } from '../problems/problem.exception';
import { contiguousOwners } from '../placement/routing';
import { parseInput } from '../validation/parse-input';
import { moveKeyGroupsBody, resolveMoves, type MoveTarget } from './move-request';

const target: MoveTarget = {
  bundle: 'totals@1.0.0',
  operatorIds: ['in', 'by-key', 'totals', 'out'],
  maxParallelism: 8,
  parallelism: { in: 2, 'by-key': 2, totals: 2, out: 2 },
  routing: { in: contiguousOwners(2, 8), 'by-key': contiguousOwners(2, 8), totals: [1, 0, 0, 0, 1, 1, 1, 1], out: contiguousOwners(2, 8) },
};
const body = (moves: { keyGroup: number; toSubtask: number }[], operatorId = 'totals') => ({ operatorId, moves });

describe('resolveMoves', () => {
  it('resolves each key group’s owner from the run’s current routing', () => {
    expect(resolveMoves(body([{ keyGroup: 1, toSubtask: 1 }, { keyGroup: 0, toSubtask: 0 }]), target)).toEqual({
      ok: true,
      moves: [
        { keyGroup: 1, fromSubtask: 0, toSubtask: 1 },
        { keyGroup: 0, fromSubtask: 1, toSubtask: 0 },
      ],
    });
  });

  it('names an operator the bundle does not list', () => {
    expect(resolveMoves(body([{ keyGroup: 1, toSubtask: 1 }], 'nope'), target)).toEqual({
      ok: false,
      errors: [{ in: 'body', name: 'operatorId', reason: 'is not an operator of bundle totals@1.0.0 (operators: in, by-key, totals, out)' }],
    });
  });

  it('names every bad move at once: out of range, no such subtask, already there, twice', () => {
    const result = resolveMoves(
      body([
        { keyGroup: 8, toSubtask: 1 },
        { keyGroup: 1, toSubtask: 2 },
        { keyGroup: 4, toSubtask: 1 },
        { keyGroup: 2, toSubtask: 1 },
        { keyGroup: 2, toSubtask: 1 },
      ]),
      target,
    );
    expect(result).toEqual({
      ok: false,
      errors: [
        { in: 'body', name: 'moves.0.keyGroup', reason: 'key group 8 does not exist: bundle totals@1.0.0 has 8 key groups (0 to 7)' },
        { in: 'body', name: 'moves.1.toSubtask', reason: 'operator totals runs 2 subtasks (0 to 1), so there is no subtask 2' },
        { in: 'body', name: 'moves.2.toSubtask', reason: 'key group 4 of operator totals is on subtask 1 already' },
        { in: 'body', name: 'moves.4.keyGroup', reason: 'key group 2 is moved by moves.3 already; name each key group once' },
      ],
    });
  });

  it('has nothing to move on an operator of one subtask', () => {
    const one = { ...target, parallelism: { ...target.parallelism, totals: 1 }, routing: { ...target.routing, totals: contiguousOwners(1, 8) } };
    const result = resolveMoves(body([{ keyGroup: 0, toSubtask: 0 }, { keyGroup: 1, toSubtask: 1 }]), one);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.errors.map((e) => e.reason)).toEqual([
      'key group 0 of operator totals is on subtask 0 already',
      'operator totals runs 1 subtask (0 to 0), so there is no subtask 1',
    ]);
  });
});

describe('the request body', () => {
  const problems = (value: unknown) => {
    try {
      parseInput(moveKeyGroupsBody, value, 'body');
      return [];
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidRequestProblem);
      return (err as InvalidRequestProblem).errors!.map((e) => `${e.name}: ${e.reason}`);
    }
  };

  it('takes an operator id, at least one move and an optional reason', () => {
    expect(problems({ operatorId: 'totals', moves: [{ keyGroup: 0, toSubtask: 1 }], reason: 'hot key' })).toEqual([]);
    expect(problems({ operatorId: 'totals', moves: [] })).toEqual(['moves: must move at least one key group']);
    expect(problems({ moves: [{ keyGroup: -1, toSubtask: 0.5 }], extra: 1 })).toEqual([
      'operatorId: is required',
      'moves.0.keyGroup: must be a key group: an integer from 0',
      'moves.0.toSubtask: must be a subtask index: an integer from 0',
      'extra: is not a recognised parameter',
    ]);
    expect(problems({ operatorId: 'a b', moves: [{ keyGroup: 0, toSubtask: 0, from: 1 }], reason: 'x'.repeat(501) })).toEqual([
      'operatorId: must be an operator id: 1-64 of A-Z, a-z, 0-9, "_" or "-"',
      'moves.0.from: is not a recognised parameter',
      'reason: must be at most 500 characters',
    ]);
  });
});

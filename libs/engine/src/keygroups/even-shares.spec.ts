import { describe, expect, it } from 'vitest';
import { evenShareMoves } from './even-shares';
import { RoutingTable } from './routing-table';

const apply = (owners: number[], moves: ReturnType<typeof evenShareMoves>): number[] => {
  const out = [...owners];
  for (const m of moves) {
    expect(out[m.keyGroup]).toBe(m.fromSubtask);
    out[m.keyGroup] = m.toSubtask;
  }
  return out;
};
const shares = (owners: number[], p: number): number[] => Array.from({ length: p }, (_, s) => owners.filter((o) => o === s).length);

describe('evenShareMoves', () => {
  it('scales 2 → 4 by moving half of each range to a new subtask, nothing between the old ones', () => {
    const owners = RoutingTable.initial(2, 32).toJSON().owners;
    const moves = evenShareMoves(owners, 4);
    expect(moves).toHaveLength(16);
    expect(moves.every((m) => m.toSubtask >= 2)).toBe(true);
    const after = apply(owners, moves);
    expect(shares(after, 4)).toEqual([8, 8, 8, 8]);
    // Each old subtask keeps its lowest key groups.
    expect(after.slice(0, 8).every((o) => o === 0)).toBe(true);
    expect(after.slice(16, 24).every((o) => o === 1)).toBe(true);
  });

  it('scales 4 → 2 by moving everything off the retiring subtasks only', () => {
    const owners = RoutingTable.initial(4, 30).toJSON().owners;
    const moves = evenShareMoves(owners, 2);
    expect(moves.every((m) => m.fromSubtask >= 2 && m.toSubtask < 2)).toBe(true);
    const after = apply(owners, moves);
    expect(shares(after, 2)).toEqual([15, 15]);
    expect(after.every((o) => o < 2)).toBe(true);
  });

  it('evens out a skewed table, the larger shares going to those that own most', () => {
    const owners = [0, 0, 0, 0, 0, 0, 1, 2];
    const after = apply(owners, evenShareMoves(owners, 3));
    expect(shares(after, 3)).toEqual([3, 3, 2]);
  });

  it('moves nothing when the shares are even already', () => {
    expect(evenShareMoves(RoutingTable.initial(3, 128).toJSON().owners, 3)).toEqual([]);
  });

  it('refuses more subtasks than key groups', () => {
    expect(() => evenShareMoves([0, 0], 3)).toThrow(/parallelism/);
  });
});

import { keyGroupRangeFor } from '@weir/engine';
import { describe, expect, it } from 'vitest';
import { applyMoves, contiguousOwners, keyGroupRanges, ownersFromAssignments, planRouting, routedAssignments, RoutingArgumentError, routingOfRun } from './routing';
import { planProcesses, planSubtasks, type PlacementBundle } from './subtask-plan';

const bundle: PlacementBundle = { id: 'b', key: 'k', sha256: 'x'.repeat(64), operatorIds: ['src', 'counts'], maxParallelism: 8 };
const parallelism = { default: 1, operators: { counts: 3 } };

describe('contiguousOwners', () => {
  it('agrees with the engine’s contiguous ranges for every width', () => {
    for (let p = 1; p <= 8; p++) {
      const owners = contiguousOwners(p, 8);
      for (let s = 0; s < p; s++) {
        const { start, end } = keyGroupRangeFor(s, p, 8);
        expect(keyGroupRanges(owners, s)).toEqual(end >= start ? [[start, end]] : []);
      }
    }
  });
});

describe('planRouting', () => {
  it('starts every operator of the bundle from contiguous ranges', () => {
    expect(planRouting(bundle, parallelism, null)).toEqual({ src: [0, 0, 0, 0, 0, 0, 0, 0], counts: [0, 0, 0, 1, 1, 1, 2, 2] });
  });

  it('keeps the moves of an operator whose parallelism and key-group count are unchanged', () => {
    const moved = { src: [0, 0, 0, 0, 0, 0, 0, 0], counts: [2, 0, 0, 1, 1, 0, 2, 2] };
    expect(planRouting(bundle, parallelism, { routing: moved, parallelism: { src: 1, counts: 3 } })).toEqual(moved);
  });

  it('re-plans an operator rescaled, or one whose key-group count changed, and only that one', () => {
    const moved = { src: [0, 0, 0, 0, 0, 0, 0, 0], counts: [2, 0, 0, 1, 1, 0, 2, 2] };
    // counts 3 → 2: contiguous again.
    expect(planRouting(bundle, { default: 1, operators: { counts: 2 } }, { routing: moved, parallelism: { src: 1, counts: 3 } }).counts).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
    // Another bundle version with 16 key groups: the old owners name 8 of them.
    const wider = { ...bundle, maxParallelism: 16 };
    expect(planRouting(wider, parallelism, { routing: moved, parallelism: { src: 1, counts: 3 } }).counts).toEqual(contiguousOwners(3, 16));
    // An owner the new width has no subtask for (a corrupt record) is not kept either.
    expect(planRouting(bundle, parallelism, { routing: { counts: [5, 0, 0, 1, 1, 1, 2, 2] }, parallelism: { counts: 3 } }).counts).toEqual(contiguousOwners(3, 8));
    // An operator the previous run did not have starts contiguous.
    expect(planRouting(bundle, parallelism, { routing: { counts: moved.counts }, parallelism: { counts: 3 } }).src).toEqual(contiguousOwners(1, 8));
  });
});

describe('applyMoves', () => {
  it('moves only the key groups named, in a new routing', () => {
    const before = planRouting(bundle, parallelism, null);
    const after = applyMoves(before, 'counts', [
      { keyGroup: 0, toSubtask: 2 },
      { keyGroup: 5, toSubtask: 0 },
    ]);
    expect(after.counts).toEqual([2, 0, 0, 1, 1, 0, 2, 2]);
    expect(after.src).toBe(before.src);
    expect(before.counts).toEqual([0, 0, 0, 1, 1, 1, 2, 2]);
  });

  it('refuses an operator or key group the routing does not have', () => {
    const routing = planRouting(bundle, parallelism, null);
    expect(() => applyMoves(routing, 'nope', [{ keyGroup: 0, toSubtask: 0 }])).toThrow(RoutingArgumentError);
    expect(() => applyMoves(routing, 'counts', [{ keyGroup: 8, toSubtask: 0 }])).toThrow(/outside 0..7/);
  });
});

describe('the layout from a routing', () => {
  it('gives each subtask the fewest ascending ranges of what it owns', () => {
    expect(keyGroupRanges([2, 0, 0, 1, 1, 0, 2, 2], 0)).toEqual([
      [1, 2],
      [5, 5],
    ]);
    expect(keyGroupRanges([2, 0, 0, 1, 1, 0, 2, 2], 2)).toEqual([
      [0, 0],
      [6, 7],
    ]);
    expect(keyGroupRanges([0, 0], 1)).toEqual([]);
  });

  it('lays the processes out along the routing, operators it lacks keeping their ranges', () => {
    const routing = { counts: [2, 0, 0, 1, 1, 0, 2, 2] };
    expect(planProcesses(bundle, parallelism, routing).map((p) => p.subtasks.map((s) => `${s.operatorId}${s.subtask}:${JSON.stringify(s.keyGroups)}`))).toEqual([
      ['src0:[[0,7]]', 'counts0:[[1,2],[5,5]]'],
      ['counts1:[[3,4]]'],
      ['counts2:[[0,0],[6,7]]'],
    ]);
    // Without a routing (or with the contiguous one) the plan is the contiguous one.
    expect(planProcesses(bundle, parallelism, planRouting(bundle, parallelism, null))).toEqual(planProcesses(bundle, parallelism));
  });

  it('reads owners back from ranges, refusing ranges that do not cover every key group once', () => {
    const subtasks = routedAssignments(planSubtasks(bundle, parallelism), { counts: [2, 0, 0, 1, 1, 0, 2, 2] });
    expect(ownersFromAssignments(subtasks, 'counts', 8)).toEqual([2, 0, 0, 1, 1, 0, 2, 2]);
    expect(ownersFromAssignments(subtasks, 'src', 8)).toEqual(contiguousOwners(1, 8));
    expect(ownersFromAssignments(subtasks.filter((s) => s.subtask !== 1), 'counts', 8)).toBeNull();
    expect(ownersFromAssignments([...subtasks, { operatorId: 'counts', subtask: 1, keyGroups: [[0, 0]] }], 'counts', 8)).toBeNull();
  });
});

describe('routingOfRun', () => {
  it('is the recorded routing, or for a run recorded before routings were, what its ranges say', () => {
    const routing = { src: contiguousOwners(1, 8), counts: [2, 0, 0, 1, 1, 0, 2, 2] };
    expect(routingOfRun({ routing, subtasks: [] }, bundle)).toBe(routing);
    expect(routingOfRun({ routing: null, subtasks: planSubtasks(bundle, parallelism) }, bundle)).toEqual(planRouting(bundle, parallelism, null));
  });
});

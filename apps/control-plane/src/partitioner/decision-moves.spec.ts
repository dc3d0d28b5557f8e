import { planPartitioning, unsplitLayout } from '@weir/partitioner';
import { describe, expect, it } from 'vitest';
import { resolveMoves } from '../moves/move-request';
import { moveRequestOf } from './decision-moves';

/** 8 key groups over 2 subtasks, contiguous; subtask 0's key groups carry 3× subtask 1's. */
const owners = [0, 0, 0, 0, 1, 1, 1, 1];
const layout = unsplitLayout(2, owners);
const load = { keyGroupRates: [300, 300, 300, 300, 100, 100, 100, 100], keyRates: [], capacities: [null, null], stateBytes: new Array<number>(8).fill(0) };

describe('a decision as a key-group move request', () => {
  it('asks for exactly the planned moves, naming the decision first in the reason, and resolves against the run as a tenant’s POST does', () => {
    const decision = planPartitioning({ layout, load, nowMs: 0, splittable: false });
    expect(decision.moves.length).toBeGreaterThan(0);
    const body = moveRequestOf('counts', decision, 's0000000000010123456789ab');
    expect(body).not.toBeNull();
    expect(body!.operatorId).toBe('counts');
    expect(body!.moves).toEqual(decision.moves.map((m) => ({ keyGroup: m.keyGroup, toSubtask: m.toSubtask })));
    expect(body!.reason).toMatch(/^partitioner decision s0000000000010123456789ab: \d+ key groups? of counts to even the load, imbalance 1\.50× → 1\.\d\d×$/);
    expect(body!.reason!.length).toBeLessThanOrEqual(500);

    const resolved = resolveMoves(body!, { bundle: 'b@1', operatorIds: ['src', 'counts'], maxParallelism: 8, parallelism: { counts: 2 }, routing: { counts: owners } });
    expect(resolved).toEqual({ ok: true, moves: decision.moves.map((m) => ({ keyGroup: m.keyGroup, fromSubtask: m.fromSubtask, toSubtask: m.toSubtask })) });
  });

  it('asks for nothing when the decision moves nothing', () => {
    const balanced = planPartitioning({ layout, load: { ...load, keyGroupRates: new Array<number>(8).fill(100) }, nowMs: 0, splittable: false });
    expect(moveRequestOf('counts', balanced, 's0000000000010123456789ab')).toBeNull();
  });
});

import { planPartitioning, unsplitLayout } from '@weir/partitioner';
import { describe, expect, it } from 'vitest';
import { isContinuing, lastChangedAtMs } from './cool-downs';

describe('cool-down bookkeeping', () => {
  it('keeps the latest change of each key group, whatever order the moves come in', () => {
    expect(
      lastChangedAtMs([
        { keyGroup: 3, atMs: 2_000 },
        { keyGroup: 5, atMs: 1_000 },
        { keyGroup: 3, atMs: 1_500 },
        { keyGroup: 5, atMs: 4_000 },
      ]),
    ).toEqual({ 3: 2_000, 5: 4_000 });
    expect(lastChangedAtMs([])).toEqual({});
  });

  it('continues only a plan that stopped on its budget and whose move was made', () => {
    expect(isContinuing(null)).toBe(false);
    expect(isContinuing({ unfinished: true, moveState: 'DONE' })).toBe(true);
    expect(isContinuing({ unfinished: true, moveState: null })).toBe(false);
    expect(isContinuing({ unfinished: true, moveState: 'FAILED' })).toBe(false);
    expect(isContinuing({ unfinished: false, moveState: 'DONE' })).toBe(false);
  });

  it('holds back a key group moved within the cool-down, as the planner reads it', () => {
    const owners = [0, 0, 1, 1];
    const load = { keyGroupRates: [500, 400, 50, 50], keyRates: [], capacities: [null, null], stateBytes: [0, 0, 0, 0] };
    const nowMs = 1_000_000;
    const free = planPartitioning({ layout: unsplitLayout(2, owners), load, nowMs, splittable: false });
    const moved = free.moves.map((m) => m.keyGroup);
    expect(moved.length).toBeGreaterThan(0);
    const cooled = planPartitioning({
      layout: unsplitLayout(2, owners),
      load,
      nowMs,
      lastChangedAtMs: lastChangedAtMs(moved.map((keyGroup) => ({ keyGroup, atMs: nowMs - 60_000 }))),
      splittable: false,
    });
    expect(cooled.moves.filter((m) => moved.includes(m.keyGroup))).toEqual([]);
    expect(cooled.declined.some((d) => d.reason === 'cool-down')).toBe(true);
  });
});

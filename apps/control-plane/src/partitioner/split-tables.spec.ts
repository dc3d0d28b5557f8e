import { describe, expect, it } from 'vitest';
import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import { snapshotOf } from '../../../../libs/metrics/src/test-support/snapshot';
import { plannerView, tableAfter } from './split-tables';

/** 8 key groups over 2 subtasks: 0–3 on subtask 0, 4–7 on subtask 1. */
const owners = [0, 0, 0, 0, 1, 1, 1, 1];

function snapshot(subtask: number, keyGroupCounts: Record<number, number>, heavyKeys: SubtaskMetricsSnapshot['heavyKeys'], keySplits?: SubtaskMetricsSnapshot['keySplits']): SubtaskMetricsSnapshot {
  return snapshotOf({ subtask, keyGroupCounts, heavyKeys, ...(keySplits ? { keySplits } : {}) });
}

describe('plannerView', () => {
  it('is not splittable when the subtasks report no table', () => {
    const view = plannerView([snapshot(0, { 0: 10 }, []), snapshot(1, { 4: 10 }, [])], owners);
    expect(view).toMatchObject({ ok: true, splittable: false, splits: [] });
  });

  it("moves a split key's part from its host key group back to its own, on the host's subtask", () => {
    const table = [{ key: 'hot', keyGroup: 1, parts: [1, 6], weights: [0.4, 0.6] }];
    const view = plannerView(
      [
        snapshot(0, { 1: 400, 2: 50 }, [{ key: 'hot', keyGroup: 1, count: 400, error: 0 }], table),
        snapshot(1, { 6: 650, 5: 50 }, [{ key: 'hot', keyGroup: 6, count: 600, error: 0 }], table),
      ],
      owners,
    );
    if (!view.ok) throw new Error(view.why);
    expect(view.splits).toEqual([{ key: 'hot', keyGroup: 1, subtasks: [0, 1], weights: [0.4, 0.6] }]);
    expect(view.snapshots[1].keyGroupCounts).toEqual({ 6: 50, 5: 50, 1: 600 });
    expect(view.snapshots[1].heavyKeys).toEqual([{ key: 'hot', keyGroup: 1, count: 600, error: 0 }]);
    expect(view.snapshots[0].keyGroupCounts).toEqual({ 1: 400, 2: 50 });
  });

  it('waits while the processes report different tables', () => {
    const table = [{ key: 'hot', keyGroup: 1, parts: [1, 6], weights: [0.5, 0.5] }];
    const view = plannerView([snapshot(0, {}, [], table), snapshot(1, {}, [], [])], owners);
    expect(view).toEqual({ ok: false, why: expect.stringContaining('different split tables') });
  });
});

describe('tableAfter', () => {
  const split = (subtasks: number[], weights: number[]) => ({ key: 'hot', keyGroup: 1, subtasks, weights, change: 'new' as const, reason: '', evidence: {} as never });

  it("puts a new split's parts on its own key group and the least loaded key group of each other subtask", () => {
    const rates = [0, 900, 0, 0, 30, 10, 20, 40];
    expect(tableAfter({ splits: [split([0, 1], [0.5, 0.5])], foldBacks: [], moves: [] }, [], owners, rates)).toEqual([{ key: 'hot', keyGroup: 1, parts: [1, 5], weights: [0.5, 0.5] }]);
  });

  it('keeps the key group that hosts a part already, and follows the moves of the same decision', () => {
    const current = [{ key: 'hot', keyGroup: 1, parts: [1, 6], weights: [0.5, 0.5] }];
    const rates = new Array(8).fill(0);
    const reweighted = tableAfter({ splits: [split([0, 1], [0.3, 0.7])], foldBacks: [], moves: [] }, current, owners, rates);
    expect(reweighted).toEqual([{ key: 'hot', keyGroup: 1, parts: [1, 6], weights: [0.3, 0.7] }]);
    // Key group 1 moves to subtask 1 in the same decision: subtask 0's part is another of its key groups.
    const moved = tableAfter({ splits: [split([1, 0], [0.5, 0.5])], foldBacks: [], moves: [{ keyGroup: 1, fromSubtask: 0, toSubtask: 1 } as never] }, current, owners, rates);
    expect(moved).toEqual([{ key: 'hot', keyGroup: 1, parts: [1, 0], weights: [0.5, 0.5] }]);
  });

  it('drops a folded-back key and says nothing when no split changes', () => {
    const current = [{ key: 'hot', keyGroup: 1, parts: [1, 6], weights: [0.5, 0.5] }];
    const fold = { key: 'hot', keyGroup: 1, toSubtask: 0, fromSubtasks: [0, 1], reason: '', evidence: { keyRate: 1, foldBelowRate: 2 } };
    expect(tableAfter({ splits: [], foldBacks: [fold], moves: [] }, current, owners, [])).toEqual([]);
    expect(tableAfter({ splits: [], foldBacks: [], moves: [] }, current, owners, [])).toBeNull();
  });
});

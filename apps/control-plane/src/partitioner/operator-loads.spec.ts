import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import { describe, expect, it } from 'vitest';
import { keyedOperatorLoads } from './operator-loads';

function snapshot(operatorId: string, subtask: number, keyGroupCounts: Record<number, number>): SubtaskMetricsSnapshot {
  const records = Object.values(keyGroupCounts).reduce((a, n) => a + n, 0);
  return {
    tenantId: 't1',
    jobId: 'd1',
    operatorId,
    subtask,
    fromMs: 1_000,
    toMs: 2_000,
    recordsIn: records,
    recordsOut: records,
    recordsInPerSec: records,
    recordsOutPerSec: records,
    busyMsPerSec: 500,
    backpressuredMsPerSec: 0,
    idleMsPerSec: 500,
    eventTimeLatency: '',
    processingLatency: '',
    keyGroupCounts,
    heavyKeys: [],
    watermarkLagMs: null,
    deadLettered: 0,
    sourceBacklog: null,
  };
}

const routing = { words: [0, 0, 0, 0], counts: [0, 0, 1, 1] };
const parallelism = { words: 1, counts: 2 };

describe('the keyed operators’ load models from snapshots', () => {
  it('plans the operators that counted key groups over at least two subtasks, on the run’s routing', () => {
    const [result, ...rest] = keyedOperatorLoads(['words', 'counts'], routing, parallelism, [
      snapshot('words', 0, {}),
      snapshot('counts', 0, { 0: 300, 1: 100 }),
      snapshot('counts', 1, { 2: 100 }),
      // A subtask the run no longer has (a rescale's leftover) is not counted.
      snapshot('counts', 2, { 3: 999 }),
    ]);
    expect(rest).toEqual([]);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.operator.operatorId).toBe('counts');
    expect(result.operator.layout.owners).toEqual([0, 0, 1, 1]);
    expect(result.operator.load.keyGroupRates).toEqual([300, 100, 100, 0]);
    expect(result.operator.load.capacities).toEqual([800, 200]);
  });

  it('waits for a subtask without a fresh snapshot rather than taking it for an idle one', () => {
    expect(keyedOperatorLoads(['counts'], routing, parallelism, [snapshot('counts', 0, { 0: 300 })])).toEqual([
      { ok: false, operatorId: 'counts', why: 'no fresh snapshot of subtask 1 of 2' },
    ]);
  });

  it('says why when the snapshots do not fit the run (a key group past its count)', () => {
    expect(keyedOperatorLoads(['counts'], routing, parallelism, [snapshot('counts', 0, { 7: 1 }), snapshot('counts', 1, { 2: 1 })])).toEqual([
      { ok: false, operatorId: 'counts', why: 'subtask 0 counted key group 7, outside [0, 4)' },
    ]);
  });
});

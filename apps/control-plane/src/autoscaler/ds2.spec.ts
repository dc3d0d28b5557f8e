import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import { describe, expect, it } from 'vitest';
import { loadImbalance, operatorNeed, operatorRates, sourceDemand } from './ds2';

function snapshotOf(fields: Partial<SubtaskMetricsSnapshot>): SubtaskMetricsSnapshot {
  return {
    tenantId: 't1', jobId: 'd1', operatorId: 'op', subtask: 0, fromMs: 0, toMs: 1_000, recordsIn: 0, recordsOut: 0, recordsInPerSec: 0, recordsOutPerSec: 0,
    busyMsPerSec: 0, backpressuredMsPerSec: 0, idleMsPerSec: 1_000, eventTimeLatency: '', processingLatency: '', keyGroupCounts: {}, heavyKeys: [],
    watermarkLagMs: null, deadLettered: 0, sourceBacklog: null, ...fields,
  };
}

const counts = (subtask: number, recordsInPerSec: number, busyMsPerSec: number) => snapshotOf({ operatorId: 'counts', subtask, recordsInPerSec, busyMsPerSec });

describe("DS2's arithmetic", () => {
  it('measures the true rate as records ÷ busy time over the measured subtasks; below 5% busy a subtask is unmeasured', () => {
    const rates = operatorRates('counts', [counts(0, 2_000, 500), counts(1, 1_500, 500), counts(2, 10, 20), snapshotOf({ operatorId: 'other', subtask: 0, recordsInPerSec: 9_999, busyMsPerSec: 999 })], 3);
    // 3,500 records in 1 s of busy time over the two measured subtasks; the third (2% busy) is left out.
    expect(rates.trueRatePerSubtask).toBe(3_500);
    expect(rates.measuredSubtasks).toBe(2);
    expect(rates.recordsInPerSec).toBe(3_510);
    expect(rates.subtaskRates).toEqual([2_000, 1_500, 10]);
    expect(rates.busyMsPerSec).toEqual({ mean: 340, max: 500, maxSubtask: 0 });
    expect(operatorRates('counts', [counts(0, 10, 10)], 1).trueRatePerSubtask).toBeNull();
  });

  it('targets the ingest rate plus the backlog drained within the catch-up window', () => {
    const sources = [snapshotOf({ operatorId: 'tx', subtask: 0, recordsOutPerSec: 600, sourceBacklog: 30_000 }), snapshotOf({ operatorId: 'tx', subtask: 1, recordsOutPerSec: 400, sourceBacklog: 30_000 })];
    // The backlog grew by 20,000 in 10 s: 2,000/s arrive beyond the 1,000/s read; 60,000 behind drain over 60 s.
    const demand = sourceDemand(sources, 60_000, { atMs: 0, records: 40_000 }, 10_000, 60_000);
    expect(demand).toEqual({ readRatePerSec: 1_000, backlog: 60_000, backlogGrowthPerSec: 2_000, ingestRatePerSec: 3_000, targetRatePerSec: 4_000, scale: 4 });
    // Without a previous sample the growth is unknown: the read rate stands for the ingest rate.
    expect(sourceDemand(sources, 60_000, null, 10_000, 60_000)).toMatchObject({ backlogGrowthPerSec: null, ingestRatePerSec: 1_000, targetRatePerSec: 2_000, scale: 2 });
    // No Kafka source: the operators' own rates are the demand.
    expect(sourceDemand([], null, null, 0, 60_000).scale).toBe(1);
  });

  it('sizes an operator for its target rate at the target utilization (one step to the right parallelism)', () => {
    // 2 subtasks at 90% busy, 1,000 records/s each when busy all the time: 1,800/s now.
    const rates = operatorRates('counts', [counts(0, 900, 900), counts(1, 900, 900)], 2);
    expect(rates.trueRatePerSubtask).toBe(1_000);
    expect(operatorNeed(rates, 1, 0.7)).toEqual({ operatorId: 'counts', targetRatePerSec: 1_800, utilization: 0.9, parallelism: 3, measured: true });
    // Twice the input (a 2× step): 3,600/s at 700 each → 6 subtasks, not 5 (5 would be 103% of the target utilization).
    expect(operatorNeed(rates, 2, 0.7).parallelism).toBe(6);
    // Exactly at the target utilization it keeps its width (no rounding up past it).
    expect(operatorNeed(operatorRates('counts', [counts(0, 700, 700)], 1), 1, 0.7).parallelism).toBe(1);
  });

  it('reads an unmeasured operator by its busy share, which is known to be low', () => {
    const rates = operatorRates('counts', [counts(0, 5, 30), counts(1, 5, 30), counts(2, 5, 30), counts(3, 5, 30)], 4);
    expect(operatorNeed(rates, 1, 0.7)).toMatchObject({ measured: false, utilization: 0.03, parallelism: 1 });
  });

  it('gives the load imbalance as max ÷ mean of the subtasks’ records in', () => {
    expect(loadImbalance(operatorRates('counts', [counts(0, 300, 500), counts(1, 100, 100)], 2))).toBe(1.5);
    expect(loadImbalance(operatorRates('counts', [], 2))).toBe(1);
  });
});

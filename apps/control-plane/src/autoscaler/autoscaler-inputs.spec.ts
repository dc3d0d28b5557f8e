import { LatencyRecorder, type SubtaskMetricsSnapshot } from '@weir/metrics';
import { describe, expect, it } from 'vitest';
import { autoscalerFigures, latestLatency, sloPressure, type SloOfDeployment } from './autoscaler-inputs';

function snapshot(operatorId: string, subtask: number, fields: Partial<SubtaskMetricsSnapshot> = {}): SubtaskMetricsSnapshot {
  return {
    tenantId: 't1', jobId: 'd1', operatorId, subtask, fromMs: 1_000, toMs: 2_000, recordsIn: 0, recordsOut: 0, recordsInPerSec: 0, recordsOutPerSec: 0,
    busyMsPerSec: 0, backpressuredMsPerSec: 0, idleMsPerSec: 1_000, eventTimeLatency: '', processingLatency: '', keyGroupCounts: {}, heavyKeys: [],
    watermarkLagMs: null, deadLettered: 0, sourceBacklog: null, ...fields,
  };
}

const keyed = (subtask: number, recordsInPerSec: number, busyMsPerSec: number) => snapshot('counts', subtask, { recordsInPerSec, busyMsPerSec, keyGroupCounts: { [subtask]: recordsInPerSec } });
const policy = { catchUpMs: 100_000, targetUtilization: 0.7 };

describe('the figures a look decides on', () => {
  it('sizes the keyed operators as wide as the run, scaled by the Kafka sources’ backlog', () => {
    const figures = autoscalerFigures(
      [
        keyed(0, 500, 500),
        keyed(1, 500, 500),
        // A narrower keyed operator (the tenant set it to 1) is not rescaled by the process count: not sized.
        snapshot('narrow', 0, { recordsInPerSec: 10, busyMsPerSec: 900, keyGroupCounts: { 0: 10 } }),
        // A source subtask with a backlog: 1,000/s read, 50,000 behind → 500/s more over the 100 s catch-up.
        snapshot('tx', 0, { recordsOutPerSec: 1_000, sourceBacklog: 50_000 }),
        // A leftover of a wider layout: ignored.
        keyed(2, 9_999, 999),
      ],
      { counts: 2, narrow: 1, tx: 1 },
      2,
      null,
      2_000,
      policy,
    );
    expect(figures.ok).toBe(true);
    if (!figures.ok) return;
    expect(figures.operators.map((o) => o.rates.operatorId)).toEqual(['counts']);
    expect(figures.source).toMatchObject({ readRatePerSec: 1_000, backlog: 50_000, targetRatePerSec: 1_500, scale: 1.5 });
    // 1,000/s at 1,000 per subtask busy all the time, asked 1,500/s: 75% of 2 subtasks, 3 at 70%.
    expect(figures.operators[0].need).toMatchObject({ targetRatePerSec: 1_500, utilization: 0.75, parallelism: 3 });
  });

  it('waits for every subtask of an operator, and says why without a keyed one', () => {
    expect(autoscalerFigures([keyed(0, 500, 500)], { counts: 2 }, 2, null, 0, policy)).toEqual({ ok: false, why: 'operator counts: 1 of 2 subtasks have no fresh snapshot' });
    expect(autoscalerFigures([snapshot('words', 0)], { words: 1 }, 1, null, 0, policy)).toEqual({ ok: false, why: "no keyed operator across the run's 1 process reported key groups" });
  });

  it('reads the SLO’s percentile of the merged latency, under pressure above the fraction of its threshold', () => {
    const recorder = new LatencyRecorder();
    for (let ms = 1; ms <= 1_000; ms++) recorder.record(ms);
    const latency = latestLatency([snapshot('out', 0, { eventTimeLatency: recorder.encode() }), snapshot('counts', 0)]);
    recorder.destroy();
    expect(latency?.count).toBe(1_000);
    const slos: SloOfDeployment[] = [
      { id: 'slo-a', name: 'loose', percentile: 'p50', thresholdMs: 5_000, state: 'OK', burnRate: 0 },
      { id: 'slo-b', name: 'tight', percentile: 'p99', thresholdMs: 1_100, state: 'OK', burnRate: 0.5 },
    ];
    const pressure = sloPressure(slos, latency, 0.8);
    expect(pressure).toMatchObject({ sloId: 'slo-b', percentile: 'p99', thresholdMs: 1_100, pressure: true, burnRate: 0.5 });
    expect(pressure!.latencyMs).toBeCloseTo(990, -1);
    expect(sloPressure(slos, latency, 0.95)?.pressure).toBe(false);
    expect(sloPressure(slos, null, 0.8)).toMatchObject({ latencyMs: null, pressure: false });
    expect(sloPressure([], latency, 0.8)).toBeNull();
    expect(latestLatency([snapshot('counts', 0)])).toBeNull();
  });
});

import { LatencyRecorder, type SubtaskMetricsSnapshot } from '@weir/metrics';
import { describe, expect, it } from 'vitest';
import { jobInputOperators, toDeploymentMetrics } from './deployment-metrics';
import { minuteStart, parseJobMember, parseMinuteMember, jobMember, minuteMember } from './metrics-keys';

function snapshot(subtask: number, latencies: number[], fields: Partial<SubtaskMetricsSnapshot> = {}): SubtaskMetricsSnapshot {
  const recorder = new LatencyRecorder();
  for (const ms of latencies) recorder.record(ms);
  const encoded = recorder.encode();
  recorder.destroy();
  return {
    tenantId: 't1', jobId: 'd1', operatorId: 'op', subtask, fromMs: 1_000, toMs: 2_000, recordsIn: 10, recordsOut: 10,
    recordsInPerSec: 100, recordsOutPerSec: 90, busyMsPerSec: 100 * (subtask + 1), backpressuredMsPerSec: 0, idleMsPerSec: 0,
    eventTimeLatency: encoded, processingLatency: encoded, keyGroupCounts: {}, heavyKeys: [], watermarkLagMs: null, deadLettered: 1, sourceBacklog: null,
    ...fields,
  };
}

describe('toDeploymentMetrics', () => {
  it('merges subtasks: sums rates, max/mean busy time, merged latency histograms, largest watermark lag, span', () => {
    const m = toDeploymentMetrics([snapshot(0, [1, 2, 3], { watermarkLagMs: 50 }), snapshot(1, [100], { fromMs: 500, toMs: 2_500, watermarkLagMs: 80 })], 9_999);
    expect(m).toMatchObject({ tenantId: 't1', deploymentId: 'd1', at: 9_999, fromMs: 500, toMs: 2_500, subtasks: 2, recordsInPerSec: 200, recordsOutPerSec: 180, deadLettered: 2 });
    expect(m.busyMsPerSec).toEqual({ max: 200, mean: 150 });
    expect(m.eventTimeLatency.samples).toBe(4);
    expect(m.eventTimeLatency.max).toBeCloseTo(100, 0);
    expect(m.watermarkLagMs).toBe(80);
    expect(m.sourceBacklog).toBeNull();
  });

  it('sums the Kafka source subtasks’ backlog', () => {
    const m = toDeploymentMetrics([snapshot(0, [], { sourceBacklog: 300 }), snapshot(1, [], { sourceBacklog: 200 }), snapshot(2, [])], 0);
    expect(m.sourceBacklog).toBe(500);
  });
});

describe('throughput across stages, processes and workers', () => {
  // A three-stage job at 100 records/s: a source (2 subtasks) → keyBy → counts (3 subtasks) → keyBy → totals (2),
  // its subtasks spread over processes on two workers (the snapshots come from every one of them). Each keyed stage
  // sees every record once more, so summing every stage's input would read 300/s.
  const stage = (operatorId: string, subtask: number, inPerSec: number, keyed: boolean) =>
    snapshot(subtask, [], { operatorId, recordsInPerSec: inPerSec, recordsOutPerSec: inPerSec, keyGroupCounts: keyed && inPerSec > 0 ? { [subtask]: inPerSec } : {} });
  const job = [
    stage('src', 0, 60, false),
    stage('src', 1, 40, false),
    stage('counts', 0, 30, true),
    stage('counts', 1, 30, true),
    stage('counts', 2, 40, true),
    stage('totals', 0, 50, true),
    stage('totals', 1, 50, true),
  ];

  it('counts only the records entering the job at its sources', () => {
    expect(jobInputOperators(job)).toEqual(['src']);
    const m = toDeploymentMetrics(job, 1);
    expect(m.recordsInPerSec).toBe(100);
    expect(m.subtasks).toBe(7);
  });

  it('counts an idle keyed operator with the sources, where it adds nothing', () => {
    const idle = [...job.filter((s) => s.operatorId !== 'totals'), stage('totals', 0, 0, true), stage('totals', 1, 0, true)];
    expect(jobInputOperators(idle).sort()).toEqual(['src', 'totals']);
    expect(toDeploymentMetrics(idle, 1).recordsInPerSec).toBe(100);
  });

  it('counts every operator when none looks like a source (no fresh source snapshot)', () => {
    const keyedOnly = job.filter((s) => s.operatorId === 'counts');
    expect(jobInputOperators(keyedOnly)).toEqual(['counts']);
    expect(toDeploymentMetrics(keyedOnly, 1).recordsInPerSec).toBe(100);
  });

  it('a keyed operator is not a source when only one of its subtasks saw records', () => {
    const partly = job.map((s) => (s.operatorId === 'counts' && s.subtask === 2 ? { ...s, keyGroupCounts: {} } : s));
    expect(jobInputOperators(partly)).toEqual(['src']);
  });
});

describe('metrics keys', () => {
  it('round-trips members and rejects foreign ones', () => {
    expect(parseJobMember(jobMember('t-1', 'job_2'))).toEqual({ tenantId: 't-1', jobId: 'job_2' });
    expect(parseMinuteMember(minuteMember('t', 'j', 120_000))).toEqual({ tenantId: 't', jobId: 'j', minuteStartMs: 120_000 });
    expect(parseJobMember('a:b:c')).toBeUndefined();
    expect(parseMinuteMember('a:b:later')).toBeUndefined();
    expect(minuteStart(179_999)).toBe(120_000);
  });
});

import { LatencyRecorder, type SubtaskMetricsSnapshot } from '@weir/metrics';
import { describe, expect, it } from 'vitest';
import { toDeploymentMetrics } from './deployment-metrics';
import { minuteStart, parseJobMember, parseMinuteMember, jobMember, minuteMember } from './metrics-keys';

function snapshot(subtask: number, latencies: number[], fields: Partial<SubtaskMetricsSnapshot> = {}): SubtaskMetricsSnapshot {
  const recorder = new LatencyRecorder();
  for (const ms of latencies) recorder.record(ms);
  const encoded = recorder.encode();
  recorder.destroy();
  return {
    tenantId: 't1', jobId: 'd1', operatorId: 'op', subtask, fromMs: 1_000, toMs: 2_000, recordsIn: 10, recordsOut: 10,
    recordsInPerSec: 100, recordsOutPerSec: 90, busyMsPerSec: 100 * (subtask + 1), backpressuredMsPerSec: 0, idleMsPerSec: 0,
    eventTimeLatency: encoded, processingLatency: encoded, keyGroupCounts: {}, heavyKeys: [], watermarkLagMs: null, deadLettered: 1,
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

import { afterEach, describe, expect, it } from 'vitest';
import { LatencyRecorder } from './latency-recorder';
import { SubtaskMetrics } from './subtask-metrics';

const identity = { tenantId: 'tenant-a', jobId: 'job-1', operatorId: 'enrich', subtask: 2 };
const open: SubtaskMetrics[] = [];
function metricsAt(nowMs: number, options: { heavyKeysReported?: number } = {}): SubtaskMetrics {
  const metrics = new SubtaskMetrics({ identity, maxParallelism: 128, nowMs, ...options });
  open.push(metrics);
  return metrics;
}
afterEach(() => open.splice(0).forEach((metrics) => metrics.close()));

describe('SubtaskMetrics', () => {
  it('turns one interval of batch calls into a snapshot', () => {
    const metrics = metricsAt(10_000);
    metrics.enter('busy', 10_000);
    metrics.onBatchIn(400);
    metrics.offerKeys(['a', 'b', 'a', 'c'], [1, 2, 1, 3]);
    metrics.offerKey('a', 1, 3);
    metrics.enter('backpressured', 10_600);
    metrics.onBatchOut(300);
    metrics.recordLatencies([9_900, 9_800, 0], [9_990, 9_980, 0], 10_700, 0, 2);
    metrics.recordLatency(9_500, null, 10_700);
    metrics.enter('idle', 10_800);
    metrics.onDeadLetter(2);

    const snapshot = metrics.snapshot(12_000, 11_500);
    expect(snapshot).toMatchObject({
      ...identity,
      fromMs: 10_000,
      toMs: 12_000,
      recordsIn: 400,
      recordsOut: 300,
      recordsInPerSec: 200,
      recordsOutPerSec: 150,
      busyMsPerSec: 300,
      backpressuredMsPerSec: 100,
      idleMsPerSec: 600,
      keyGroupCounts: { 1: 5, 2: 1, 3: 1 },
      watermarkLagMs: 500,
      deadLettered: 2,
    });
    expect(snapshot.heavyKeys[0]).toEqual({ key: 'a', keyGroup: 1, count: 5, error: 0 });
    const eventTime = LatencyRecorder.summarize([snapshot.eventTimeLatency]);
    expect(eventTime.count).toBe(3);
    expect(eventTime.max).toBeCloseTo(1200, 0);
    const processing = LatencyRecorder.summarize([snapshot.processingLatency]);
    expect(processing.count).toBe(2);
    expect(processing.max).toBeCloseTo(720, 0);
    // Plain JSON: it travels over Redis unchanged.
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
  });

  it('starts each interval empty, keeping the activity state', () => {
    const metrics = metricsAt(0);
    metrics.enter('busy', 0);
    metrics.onBatchIn(10);
    metrics.offerKey('k', 4);
    metrics.recordLatency(0, 0, 5);
    metrics.snapshot(1000, null);

    const next = metrics.snapshot(3000, null);
    expect(next).toMatchObject({
      fromMs: 1000,
      toMs: 3000,
      recordsIn: 0,
      recordsInPerSec: 0,
      busyMsPerSec: 1000,
      keyGroupCounts: {},
      heavyKeys: [],
      watermarkLagMs: null,
      deadLettered: 0,
    });
    expect(LatencyRecorder.summarize([next.eventTimeLatency]).count).toBe(0);
  });

  it('reports at most heavyKeysReported keys, hottest first', () => {
    const metrics = metricsAt(0, { heavyKeysReported: 2 });
    for (let i = 0; i < 10; i++) metrics.offerKey(`k${i}`, i, i + 1);
    expect(metrics.snapshot(1000, null).heavyKeys.map((heavy) => heavy.key)).toEqual(['k9', 'k8']);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { LatencyRecorder } from './latency-recorder';
import { SubtaskMetrics } from './subtask-metrics';
import { MetricsArgumentError } from './errors';
import { seededRandom, zipfSampler } from '@weir/datagen';

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

    const snapshot = metrics.snapshot(12_000, 11_500, 42);
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
      sourceBacklog: 42,
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
      // Not a source reading Kafka: no backlog, which is not a backlog of 0.
      sourceBacklog: null,
    });
    expect(LatencyRecorder.summarize([next.eventTimeLatency]).count).toBe(0);
  });

  it('reports at most heavyKeysReported keys, hottest first', () => {
    const metrics = metricsAt(0, { heavyKeysReported: 2 });
    for (let i = 0; i < 10; i++) metrics.offerKey(`k${i}`, i, i + 1);
    expect(metrics.snapshot(1000, null).heavyKeys.map((heavy) => heavy.key)).toEqual(['k9', 'k8']);
  });
});

describe('SubtaskMetrics heavy-key sampling', () => {
  const KEYS = 100_000;
  const RECORDS = 1_000_000;

  function zipfRun(sampling: number) {
    const next = zipfSampler(KEYS, 1.2, seededRandom(5));
    const names = Array.from({ length: KEYS }, (_, rank) => `user-${rank}`);
    const truth = new Float64Array(KEYS);
    const metrics = new SubtaskMetrics({ identity, maxParallelism: 128, nowMs: 0, heavyKeySampling: sampling, heavyKeysReported: 10 });
    open.push(metrics);
    for (let i = 0; i < RECORDS; i++) {
      const rank = next();
      truth[rank]++;
      metrics.offerKey(names[rank], rank % 128);
    }
    return { snapshot: metrics.snapshot(1_000, null), truth };
  }

  it('keeps key-group counts exact and finds the true top-10 of Zipf(1.2) within the stated sampling error', () => {
    const { snapshot, truth } = zipfRun(16);
    const exactGroups = new Map<number, number>();
    truth.forEach((count, rank) => count > 0 && exactGroups.set(rank % 128, (exactGroups.get(rank % 128) ?? 0) + count));
    expect(snapshot.keyGroupCounts).toEqual(Object.fromEntries(exactGroups));
    const top = [...truth.keys()].sort((a, b) => truth[b] - truth[a]).slice(0, 10);
    expect(snapshot.heavyKeys.map((heavy) => Number(heavy.key.slice(5))).sort((a, b) => a - b)).toEqual(top.sort((a, b) => a - b));
    for (const heavy of snapshot.heavyKeys) {
      const exact = truth[Number(heavy.key.slice(5))];
      // Four standard deviations of the sampled estimate (±sqrt(c·16)), plus the sketch's own bound.
      expect(Math.abs(heavy.count - exact)).toBeLessThanOrEqual(4 * Math.sqrt(exact * 16) + heavy.error);
    }
    // The hottest key (~19.6% of 1M records): within 1%.
    expect(Math.abs(snapshot.heavyKeys[0].count - truth[0]) / truth[0]).toBeLessThan(0.01);
  });

  it('offers every record with sampling 1, and rejects a bad sampling factor', () => {
    const { snapshot, truth } = zipfRun(1);
    expect(snapshot.heavyKeys[0]).toMatchObject({ key: 'user-0', count: truth[0], error: 0 });
    expect(() => new SubtaskMetrics({ identity, maxParallelism: 8, nowMs: 0, heavyKeySampling: 0 })).toThrow(MetricsArgumentError);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import type { SubtaskMetricsSnapshot } from './contract';
import { MetricsArgumentError } from './errors';
import { LatencyRecorder } from './latency-recorder';
import { summarizeJob, summarizeOperators } from './summarize-job';
import { snapshotOf } from './test-support/snapshot';

const recorders: LatencyRecorder[] = [];
afterEach(() => recorders.splice(0).forEach((recorder) => recorder.destroy()));

function latencies(from: number, to: number): { encoded: string; recorder: LatencyRecorder } {
  const recorder = new LatencyRecorder();
  recorders.push(recorder);
  for (let ms = from; ms <= to; ms++) recorder.record(ms);
  return { encoded: recorder.encode(), recorder };
}

describe('summarizeJob', () => {
  const sinkA = latencies(1, 900);
  const sinkB = latencies(5000, 5099);
  const snapshots = [
    snapshotOf({ operatorId: 'source', subtask: 0, recordsInPerSec: 100, recordsOutPerSec: 100, busyMsPerSec: 200, sourceBacklog: 1_000 }),
    snapshotOf({ operatorId: 'source', subtask: 1, recordsInPerSec: 300, recordsOutPerSec: 300, busyMsPerSec: 400, sourceBacklog: 500 }),
    snapshotOf({
      operatorId: 'sink',
      subtask: 0,
      recordsInPerSec: 150,
      recordsOutPerSec: 140,
      busyMsPerSec: 900,
      backpressuredMsPerSec: 100,
      eventTimeLatency: sinkA.encoded,
      processingLatency: sinkA.encoded,
      watermarkLagMs: 200,
      deadLettered: 2,
      heavyKeys: [{ key: 'hot', keyGroup: 4, count: 120, error: 0 }],
      keyGroupCounts: { 4: 120 },
    }),
    snapshotOf({
      operatorId: 'sink',
      subtask: 1,
      recordsInPerSec: 250,
      recordsOutPerSec: 240,
      busyMsPerSec: 100,
      backpressuredMsPerSec: 300,
      eventTimeLatency: sinkB.encoded,
      watermarkLagMs: 900,
      deadLettered: 1,
      heavyKeys: [{ key: 'warm', keyGroup: 5, count: 60, error: 1 }],
      keyGroupCounts: { 5: 60 },
    }),
  ];

  it('sums source input and sink output, and merges sink histograms (not their percentiles)', () => {
    const summary = summarizeJob(snapshots, { sourceOperators: ['source'], sinkOperators: ['sink'], heavyKeys: 5 });
    const union = LatencyRecorder.merge([sinkA.recorder, sinkB.recorder]);
    recorders.push(union);
    expect(summary).toEqual({
      tenantId: 'tenant-a',
      jobId: 'job-1',
      recordsInPerSec: 400,
      recordsOutPerSec: 380,
      busyMsPerSec: { max: 900, mean: 400 },
      backpressuredMsPerSec: { max: 300, mean: 100 },
      eventTimeLatency: union.summary(),
      processingLatency: sinkA.recorder.summary(),
      watermarkLagMs: 900,
      heavyKeys: [
        { key: 'hot', keyGroup: 4, count: 120, error: 0 },
        { key: 'warm', keyGroup: 5, count: 60, error: 1 },
      ],
      deadLettered: 3,
      sourceBacklog: 1_500,
    });
    expect(summary.eventTimeLatency.p95).toBeGreaterThan(5000);
  });

  it('counts every operator as source and sink when no roles are given', () => {
    const summary = summarizeJob(snapshots);
    expect(summary.recordsInPerSec).toBe(800);
    expect(summary.recordsOutPerSec).toBe(780);
    expect(summary.eventTimeLatency.count).toBe(1000);
  });

  it('has a null watermark lag when no subtask has a watermark yet', () => {
    expect(summarizeJob([snapshotOf()]).watermarkLagMs).toBeNull();
  });

  it('reads a snapshot from before the source backlog existed as reporting none', () => {
    const { sourceBacklog: _, ...older } = snapshotOf({ operatorId: 'source' });
    const summary = summarizeJob([older as SubtaskMetricsSnapshot, snapshotOf({ operatorId: 'source', subtask: 1, sourceBacklog: 7 })]);
    expect(summary.sourceBacklog).toBe(7);
    expect(summarizeJob([older as SubtaskMetricsSnapshot]).sourceBacklog).toBeNull();
  });

  it('refuses an empty list and snapshots of different jobs', () => {
    expect(() => summarizeJob([])).toThrow(MetricsArgumentError);
    expect(() => summarizeJob([snapshotOf(), snapshotOf({ jobId: 'job-2' })])).toThrow(MetricsArgumentError);
  });

  it('summarises per operator for callers that choose their own rates', () => {
    expect(summarizeOperators(snapshots)).toEqual([
      {
        operatorId: 'source',
        subtasks: 2,
        recordsInPerSec: 400,
        recordsOutPerSec: 400,
        busyMsPerSec: { max: 400, mean: 300 },
        backpressuredMsPerSec: { max: 0, mean: 0 },
        deadLettered: 0,
        sourceBacklog: 1_500,
      },
      {
        operatorId: 'sink',
        subtasks: 2,
        recordsInPerSec: 400,
        recordsOutPerSec: 380,
        busyMsPerSec: { max: 900, mean: 500 },
        backpressuredMsPerSec: { max: 300, mean: 200 },
        deadLettered: 3,
        sourceBacklog: null,
      },
    ]);
  });
});

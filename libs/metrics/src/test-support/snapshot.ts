import type { SubtaskMetricsSnapshot } from '../contract';

/** A snapshot with neutral values, for specs that vary a few fields. */
export function snapshotOf(overrides: Partial<SubtaskMetricsSnapshot> = {}): SubtaskMetricsSnapshot {
  return {
    tenantId: 'tenant-a',
    jobId: 'job-1',
    operatorId: 'op',
    subtask: 0,
    fromMs: 0,
    toMs: 1000,
    recordsIn: 0,
    recordsOut: 0,
    recordsInPerSec: 0,
    recordsOutPerSec: 0,
    busyMsPerSec: 0,
    backpressuredMsPerSec: 0,
    idleMsPerSec: 1000,
    eventTimeLatency: '',
    processingLatency: '',
    keyGroupCounts: {},
    heavyKeys: [],
    watermarkLagMs: null,
    deadLettered: 0,
    sourceBacklog: null,
    ...overrides,
  };
}

import { z } from 'zod';
import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import { epochMs, resourceId, subtaskIndex } from './common';

const nonNegative = z.number().nonnegative();

/**
 * The wire form of libs/metrics' SubtaskMetricsSnapshot (see libs/metrics/src/contract.ts): workers attach their
 * latest snapshots to heartbeats. Key-group counts arrive with string keys, as JSON has no numeric keys.
 */
export const metricsSnapshotSchema = z.object({
  tenantId: resourceId,
  jobId: resourceId,
  operatorId: resourceId,
  subtask: subtaskIndex,
  fromMs: epochMs,
  toMs: epochMs,
  recordsIn: nonNegative,
  recordsOut: nonNegative,
  recordsInPerSec: nonNegative,
  recordsOutPerSec: nonNegative,
  busyMsPerSec: nonNegative,
  backpressuredMsPerSec: nonNegative,
  idleMsPerSec: nonNegative,
  eventTimeLatency: z.base64(),
  processingLatency: z.base64(),
  keyGroupCounts: z.record(z.string().regex(/^\d+$/), nonNegative),
  heavyKeys: z.array(
    z.object({ key: z.string(), keyGroup: z.number().int().nonnegative(), count: nonNegative, error: nonNegative }),
  ).readonly(),
  watermarkLagMs: z.number().nullable(),
  deadLettered: nonNegative,
  // Optional on the wire: a worker from before the field sends none, read as null (no backlog reported).
  sourceBacklog: nonNegative.nullable().default(null),
  keySplits: z
    .array(
      z.object({
        key: z.string(),
        keyGroup: z.number().int().nonnegative(),
        parts: z.array(z.number().int().nonnegative()).readonly(),
        weights: z.array(nonNegative).readonly(),
      }),
    )
    .readonly()
    .optional(),
  windows: z.literal(true).optional(),
});
export type MetricsSnapshotMessage = z.infer<typeof metricsSnapshotSchema>;

// Compile-time guard: what libs/metrics produces is a valid wire message, and the wire form has no field the
// contract lacks. A change to either side fails the typecheck here rather than dropping metrics at run time.
type ContractFitsWire = SubtaskMetricsSnapshot extends z.input<typeof metricsSnapshotSchema> ? true : never;
type WireFieldsInContract = Exclude<keyof MetricsSnapshotMessage, keyof SubtaskMetricsSnapshot> extends never ? true : never;
type ContractFieldsOnWire = Exclude<keyof SubtaskMetricsSnapshot, keyof MetricsSnapshotMessage> extends never ? true : never;
const _metricsContractChecks: [ContractFitsWire, WireFieldsInContract, ContractFieldsOnWire] = [true, true, true];

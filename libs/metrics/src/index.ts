/**
 * @weir/metrics: what a subtask measures (synchronous, O(1) per record or batch, allocation-free on the hot path)
 * and how snapshots merge into job figures and Prometheus text. Units and definitions: docs/metrics.md.
 */
export type {
  HeavyKey,
  JobMetricsSummary,
  LatencySummary,
  ReportedKeySplit,
  SubtaskIdentity,
  SubtaskMetricsSnapshot,
} from './contract';
export { MetricsArgumentError, MetricsDecodeError, MetricsUsageError } from './errors';
export { LatencyRecorder, LATENCY_HIGHEST_US, LATENCY_LOWEST_US, LATENCY_SIGNIFICANT_DIGITS } from './latency-recorder';
export { RateCounter, perSecond, type RateSample } from './rate-counter';
export { TimeAccounting, type ActivityState, type TimeShares } from './time-accounting';
export { HeavyHitters } from './heavy-hitters';
export { mergeHeavyKeysAcrossOperators, mergeHeavyKeysOfOperator } from './heavy-key-merge';
export { KeyGroupCounters } from './key-group-counters';
export { printableKey } from './printable-key';
export {
  SubtaskMetrics,
  DEFAULT_HEAVY_HITTER_CAPACITY,
  DEFAULT_HEAVY_KEYS_REPORTED,
  DEFAULT_HEAVY_KEY_EXACT_RECORDS,
  DEFAULT_HEAVY_KEY_SAMPLING,
  type SubtaskMetricsOptions,
} from './subtask-metrics';
export { summarizeJob, summarizeOperators, type JobSummaryOptions, type OperatorMetricsSummary } from './summarize-job';
export { renderPrometheus, PROMETHEUS_CONTENT_TYPE } from './prometheus';
export { sourceBacklogOf, totalSourceBacklog } from './source-backlog';

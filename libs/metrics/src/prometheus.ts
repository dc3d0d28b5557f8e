import type { LatencySummary, SubtaskMetricsSnapshot } from './contract';
import { LatencyRecorder } from './latency-recorder';
import { sourceBacklogOf } from './source-backlog';

/** The Content-Type of the text exposition format (version 0.0.4), as prom-client's Registry uses. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

interface Family {
  readonly name: string;
  readonly help: string;
  readonly lines: string[];
}

const QUANTILES: readonly (readonly [string, keyof LatencySummary])[] = [
  ['0.5', 'p50'],
  ['0.95', 'p95'],
  ['0.99', 'p99'],
  ['0.999', 'p999'],
];

/**
 * Renders the latest snapshot of each subtask in the Prometheus text exposition format, every metric a gauge
 * labelled tenant, job, operator, subtask. Durations are in seconds (Prometheus convention); busy, backpressured
 * and idle time keep Flink's ms-per-second unit. Interval figures describe the snapshot's interval, so the
 * quantiles are a summary-style gauge with a `quantile` label, not a cumulative summary.
 *
 * Synchronous on purpose (prom-client's Registry#metrics is async); to serve it beside prom-client's default
 * metrics, concatenate the two texts: no name here collides with prom-client's.
 *
 * Several snapshots of one subtask: only the one with the latest `toMs` is rendered (a series appears once).
 * Heavy keys are not exported: they are user data and would explode label cardinality.
 */
export function renderPrometheus(snapshots: readonly SubtaskMetricsSnapshot[]): string {
  const gauge = (name: string, help: string): Family => ({ name, help, lines: [] });
  const recordsIn = gauge('weir_records_in_per_second', 'Records taken in per second over the last interval.');
  const recordsOut = gauge('weir_records_out_per_second', 'Records emitted per second over the last interval.');
  const busy = gauge('weir_busy_time_ms_per_second', 'Milliseconds per second spent processing.');
  const backpressured = gauge(
    'weir_backpressured_time_ms_per_second',
    'Milliseconds per second spent blocked on downstream.',
  );
  const idle = gauge('weir_idle_time_ms_per_second', 'Milliseconds per second spent waiting for input.');
  const eventLatency = gauge(
    'weir_event_time_latency_seconds',
    'Event-time latency (event timestamp to sink) quantiles over the last interval.',
  );
  const eventLatencyMax = gauge('weir_event_time_latency_max_seconds', 'Largest event-time latency in the interval.');
  const eventLatencyCount = gauge('weir_event_time_latency_samples', 'Event-time latencies recorded in the interval.');
  const processingLatency = gauge(
    'weir_processing_latency_seconds',
    'Processing-time latency (ingestion to sink) quantiles over the last interval.',
  );
  const processingLatencyMax = gauge(
    'weir_processing_latency_max_seconds',
    'Largest processing-time latency in the interval.',
  );
  const processingLatencyCount = gauge(
    'weir_processing_latency_samples',
    'Processing-time latencies recorded in the interval.',
  );
  const watermarkLag = gauge('weir_watermark_lag_seconds', 'Wall clock minus the current watermark.');
  const sourceBacklog = gauge('weir_source_backlog_records', "Records a Kafka source subtask is behind the log end, over its partitions.");
  const deadLettered = gauge('weir_dead_lettered_records', 'Records sent to the dead-letter topic in the interval.');
  const interval = gauge('weir_metrics_interval_seconds', 'Length of the interval the other gauges describe.');

  for (const snapshot of latestPerSubtask(snapshots)) {
    const labels = labelsOf(snapshot);
    sample(recordsIn, labels, snapshot.recordsInPerSec);
    sample(recordsOut, labels, snapshot.recordsOutPerSec);
    sample(busy, labels, snapshot.busyMsPerSec);
    sample(backpressured, labels, snapshot.backpressuredMsPerSec);
    sample(idle, labels, snapshot.idleMsPerSec);
    latencySamples(snapshot.eventTimeLatency, labels, eventLatency, eventLatencyMax, eventLatencyCount);
    latencySamples(snapshot.processingLatency, labels, processingLatency, processingLatencyMax, processingLatencyCount);
    if (snapshot.watermarkLagMs !== null) sample(watermarkLag, labels, msToSeconds(snapshot.watermarkLagMs));
    const backlog = sourceBacklogOf(snapshot);
    if (backlog !== null) sample(sourceBacklog, labels, backlog);
    sample(deadLettered, labels, snapshot.deadLettered);
    sample(interval, labels, msToSeconds(snapshot.toMs - snapshot.fromMs));
  }

  const families = [
    recordsIn,
    recordsOut,
    busy,
    backpressured,
    idle,
    eventLatency,
    eventLatencyMax,
    eventLatencyCount,
    processingLatency,
    processingLatencyMax,
    processingLatencyCount,
    watermarkLag,
    sourceBacklog,
    deadLettered,
    interval,
  ];
  let text = '';
  for (const family of families) {
    if (family.lines.length === 0) continue;
    text += `# HELP ${family.name} ${escapeHelp(family.help)}\n# TYPE ${family.name} gauge\n`;
    text += family.lines.join('\n') + '\n';
  }
  return text;
}

function latencySamples(encoded: string, labels: string, quantiles: Family, max: Family, count: Family): void {
  const summary = LatencyRecorder.summarize([encoded]);
  for (const [quantile, field] of QUANTILES) {
    sample(quantiles, `${labels},quantile="${quantile}"`, msToSeconds(summary[field]));
  }
  sample(max, labels, msToSeconds(summary.max));
  sample(count, labels, summary.count);
}

/** Whole microseconds as seconds, so 50.015 ms prints 0.050015 rather than 0.050015000000000004. */
function msToSeconds(ms: number): number {
  return Math.round(ms * 1000) / 1e6;
}

function latestPerSubtask(snapshots: readonly SubtaskMetricsSnapshot[]): SubtaskMetricsSnapshot[] {
  const latest = new Map<string, SubtaskMetricsSnapshot>();
  for (const snapshot of snapshots) {
    const id = JSON.stringify([snapshot.tenantId, snapshot.jobId, snapshot.operatorId, snapshot.subtask]);
    const seen = latest.get(id);
    if (seen === undefined || snapshot.toMs > seen.toMs) latest.set(id, snapshot);
  }
  return [...latest.values()];
}

function labelsOf(snapshot: SubtaskMetricsSnapshot): string {
  return (
    `tenant="${escapeLabel(snapshot.tenantId)}",job="${escapeLabel(snapshot.jobId)}",` +
    `operator="${escapeLabel(snapshot.operatorId)}",subtask="${snapshot.subtask}"`
  );
}

function sample(family: Family, labels: string, value: number): void {
  family.lines.push(`${family.name}{${labels}} ${formatValue(value)}`);
}

/** Go's ParseFloat reads JS's number syntax; only the non-finite values are spelled differently. */
function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

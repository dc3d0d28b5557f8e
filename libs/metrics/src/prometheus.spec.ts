import { afterEach, describe, expect, it } from 'vitest';
import { LatencyRecorder } from './latency-recorder';
import { renderPrometheus } from './prometheus';
import { parsePrometheusText } from './test-support/prometheus-text';
import { snapshotOf } from './test-support/snapshot';

const recorders: LatencyRecorder[] = [];
afterEach(() => recorders.splice(0).forEach((recorder) => recorder.destroy()));

function encodedLatencies(values: readonly number[]): string {
  const recorder = new LatencyRecorder();
  recorders.push(recorder);
  recorder.recordMany(values);
  return recorder.encode();
}

describe('renderPrometheus', () => {
  it('renders valid exposition text with one labelled gauge series per subtask', () => {
    const latencies = Array.from({ length: 1000 }, (_, i) => i + 1);
    const text = renderPrometheus([
      snapshotOf({
        subtask: 0,
        recordsInPerSec: 1234.5,
        recordsOutPerSec: 1200,
        busyMsPerSec: 700,
        backpressuredMsPerSec: 200,
        idleMsPerSec: 100,
        eventTimeLatency: encodedLatencies(latencies),
        processingLatency: encodedLatencies([2, 4]),
        watermarkLagMs: 1500,
        deadLettered: 3,
        sourceBacklog: 2500,
        fromMs: 0,
        toMs: 5000,
      }),
      snapshotOf({ subtask: 1 }),
    ]);
    const families = parsePrometheusText(text);

    for (const family of families.values()) {
      expect(family.type).toBe('gauge');
      expect(family.help).not.toBeNull();
    }
    const value = (name: string, labels: Record<string, string>) =>
      families
        .get(name)
        ?.samples.find((sample) => Object.entries(labels).every(([label, v]) => sample.labels[label] === v))?.value;
    const subtask0 = { tenant: 'tenant-a', job: 'job-1', operator: 'op', subtask: '0' };

    expect(families.get('weir_records_in_per_second')!.samples[0].labels).toEqual(subtask0);
    expect(value('weir_records_in_per_second', subtask0)).toBe(1234.5);
    expect(value('weir_records_out_per_second', subtask0)).toBe(1200);
    expect(value('weir_busy_time_ms_per_second', subtask0)).toBe(700);
    expect(value('weir_backpressured_time_ms_per_second', subtask0)).toBe(200);
    expect(value('weir_idle_time_ms_per_second', subtask0)).toBe(100);
    expect(value('weir_event_time_latency_seconds', { ...subtask0, quantile: '0.99' })).toBeCloseTo(0.99, 2);
    expect(value('weir_event_time_latency_seconds', { ...subtask0, quantile: '0.5' })).toBeCloseTo(0.5, 2);
    expect(value('weir_event_time_latency_max_seconds', subtask0)).toBeCloseTo(1, 2);
    expect(value('weir_event_time_latency_samples', subtask0)).toBe(1000);
    expect(value('weir_processing_latency_samples', subtask0)).toBe(2);
    expect(value('weir_watermark_lag_seconds', subtask0)).toBe(1.5);
    expect(value('weir_source_backlog_records', subtask0)).toBe(2500);
    // Only a subtask reporting a backlog has the series (a missing figure is not a backlog of 0).
    expect(families.get('weir_source_backlog_records')!.samples).toHaveLength(1);
    expect(value('weir_dead_lettered_records', subtask0)).toBe(3);
    expect(value('weir_metrics_interval_seconds', subtask0)).toBe(5);
    // Four quantiles for each of two subtasks; no watermark series for the subtask without a watermark.
    expect(families.get('weir_event_time_latency_seconds')!.samples).toHaveLength(8);
    expect(families.get('weir_watermark_lag_seconds')!.samples).toHaveLength(1);
  });

  it('escapes label values so any tenant, job or operator id stays parseable', () => {
    const operatorId = 'weird "op"\\with\nnewline';
    const families = parsePrometheusText(renderPrometheus([snapshotOf({ operatorId })]));
    expect(families.get('weir_busy_time_ms_per_second')!.samples[0].labels.operator).toBe(operatorId);
  });

  it('renders one series per subtask, from the latest of its snapshots', () => {
    const families = parsePrometheusText(
      renderPrometheus([
        snapshotOf({ toMs: 2000, recordsInPerSec: 2 }),
        snapshotOf({ toMs: 1000, recordsInPerSec: 1 }),
      ]),
    );
    expect(families.get('weir_records_in_per_second')!.samples.map((sample) => sample.value)).toEqual([2]);
  });

  it('renders nothing for no snapshots', () => {
    expect(renderPrometheus([])).toBe('');
  });
});

describe('parsePrometheusText (the spec helper)', () => {
  it('rejects what a Prometheus server would reject', () => {
    expect(() => parsePrometheusText('a{b="c} 1\n')).toThrow();
    expect(() => parsePrometheusText('a{b="\\x"} 1\n')).toThrow();
    expect(() => parsePrometheusText('a 1\nb 1\na 2\n')).toThrow();
    expect(() => parsePrometheusText('a{x="1"} 1\na{x="1"} 2\n')).toThrow();
    expect(() => parsePrometheusText('a one\n')).toThrow();
    expect(() => parsePrometheusText('a 1\n# TYPE a gauge\n')).toThrow();
    expect(() => parsePrometheusText('a 1')).toThrow();
  });
});

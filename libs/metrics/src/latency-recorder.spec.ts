import * as hdr from 'hdr-histogram-js';
import { afterEach, describe, expect, it } from 'vitest';
import { MetricsDecodeError, MetricsUsageError } from './errors';
import { LatencyRecorder } from './latency-recorder';

const created: LatencyRecorder[] = [];
function recorder(): LatencyRecorder {
  const made = new LatencyRecorder();
  created.push(made);
  return made;
}
afterEach(() => created.splice(0).forEach((made) => made.destroy()));

/** Within HDR's 3-significant-digit resolution (one part in 1000, plus the 1 µs unit). */
function expectClose(actual: number, expected: number): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(expected / 1000 + 0.001);
}

describe('LatencyRecorder', () => {
  it('summarises percentiles and max in milliseconds', () => {
    const latency = recorder();
    for (let ms = 1; ms <= 1000; ms++) latency.record(ms);
    const summary = latency.summary();
    expect(summary.count).toBe(1000);
    expectClose(summary.p50, 500);
    expectClose(summary.p95, 950);
    expectClose(summary.p99, 990);
    expectClose(summary.p999, 999);
    expectClose(summary.max, 1000);
  });

  it('keeps microsecond resolution for sub-millisecond latencies', () => {
    const latency = recorder();
    latency.record(0.25);
    expectClose(latency.summary().max, 0.25);
  });

  it('clamps negative, NaN and over-an-hour values instead of throwing', () => {
    const latency = recorder();
    latency.record(-5);
    latency.record(Number.NaN);
    latency.record(10 * 3_600_000);
    const summary = latency.summary();
    expect(summary.count).toBe(3);
    expect(summary.p50).toBe(0);
    expectClose(summary.max, 3_600_000);
  });

  it('records a slice of a reused buffer with recordMany, and repeated values with recordWithCount', () => {
    const latency = recorder();
    latency.recordMany(new Float64Array([1000, 2, 3, 1000]), 1, 3);
    latency.recordWithCount(7, 4);
    latency.recordWithCount(9, 0);
    const summary = latency.summary();
    expect(summary.count).toBe(6);
    expectClose(summary.max, 7);
  });

  it('round-trips through encode/decode with identical summaries', () => {
    const latency = recorder();
    for (let i = 0; i < 5000; i++) latency.record((i * 37) % 2500);
    const decoded = LatencyRecorder.decode(latency.encode());
    created.push(decoded);
    expect(decoded.summary()).toEqual(latency.summary());
  });

  it('merges histograms from several subtasks into the histogram of the union', () => {
    const [a, b, union] = [recorder(), recorder(), recorder()];
    for (let i = 1; i <= 900; i++) {
      a.record(i);
      union.record(i);
    }
    for (let i = 0; i < 100; i++) {
      b.record(5000 + i);
      union.record(5000 + i);
    }
    const merged = LatencyRecorder.merge([a.encode(), b]);
    created.push(merged);
    expect(merged.summary()).toEqual(union.summary());
    expect(LatencyRecorder.summarize([a.encode(), b.encode(), ''])).toEqual(union.summary());
    expectClose(merged.summary().p95, 5049);
  });

  it('treats an empty encoding as an empty histogram and reports zeros', () => {
    expect(LatencyRecorder.summarize([''])).toEqual({ count: 0, p50: 0, p95: 0, p99: 0, p999: 0, max: 0 });
    const latency = recorder();
    expect(LatencyRecorder.summarize([latency.encode()]).count).toBe(0);
  });

  it('rejects garbage with a typed error', () => {
    expect(() => LatencyRecorder.decode('not a histogram')).toThrow(MetricsDecodeError);
    expect(() => LatencyRecorder.summarize([Buffer.from('hello world, hello').toString('base64')])).toThrow(
      MetricsDecodeError,
    );
  });

  it('reads histograms encoded elsewhere, and refuses ones holding values beyond an hour', () => {
    const coarse = hdr.build({ numberOfSignificantValueDigits: 2 });
    coarse.recordValue(1234); // µs
    expect(LatencyRecorder.summarize([hdr.encodeIntoCompressedBase64(coarse)]).max).toBeCloseTo(1.23, 2);
    const huge = hdr.build({ highestTrackableValue: 1e13 });
    huge.recordValue(5e12);
    expect(() => LatencyRecorder.summarize([hdr.encodeIntoCompressedBase64(huge)])).toThrow(MetricsDecodeError);
  });

  it('resets to empty, and refuses use after destroy', () => {
    const latency = new LatencyRecorder();
    latency.record(3);
    latency.reset();
    expect(latency.count).toBe(0);
    latency.destroy();
    latency.destroy();
    expect(() => latency.record(1)).toThrow(MetricsUsageError);
  });
});

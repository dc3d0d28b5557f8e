import { describe, expect, it } from 'vitest';
import {
  aggregate,
  defineJob,
  memorySink,
  memorySource,
  OutputTag,
  processWindow,
  reduce,
  session,
  sliding,
  tumbling,
  type WindowAssigner,
  type WindowResult,
} from '../../index';
import { LatencyRecorder } from '@weir/metrics';
import { TestDriver } from '../../testing';

interface Click {
  user: string;
  n: number;
}

const sumCount = aggregate<string, Click, { count: number; sum: number }, { count: number; sum: number }>({
  createAccumulator: () => ({ count: 0, sum: 0 }),
  add: (v, a) => ({ count: a.count + 1, sum: a.sum + v.n }),
  getResult: (a) => a,
  merge: (a, b) => ({ count: a.count + b.count, sum: a.sum + b.sum }),
});

function windowJob(assigner: WindowAssigner, lateness = 0) {
  const late = new OutputTag<Click>('late');
  return defineJob({ name: 'windows', maxParallelism: 16 }, (b) => {
    const w = b
      .source<Click>('clicks', memorySource())
      .keyBy('by-user', (c) => c.user)
      .window('sum', assigner, sumCount, { allowedLatenessMs: lateness, lateOutputTag: late });
    w.sink('out', memorySink());
    w.sideOutput(late).sink('late', memorySink());
  });
}

const at = (user: string, n: number, timestamp: number) => ({ value: { user, n }, timestamp });

describe('tumbling windows', () => {
  it('fire once the watermark passes end - 1, with out-of-order input', async () => {
    const driver = await TestDriver.start(windowJob(tumbling(10)), { parallelism: { default: 1, sum: 2 } });
    await driver.push('clicks', [at('a', 1, 3), at('b', 10, 12), at('a', 2, 9), at('a', 4, 1), at('a', 8, 11)]);
    await driver.pushWatermark('clicks', 8);
    expect(driver.output('out')).toEqual([]);
    await driver.pushWatermark('clicks', 9);
    expect(driver.outputRecords('out')).toEqual([
      { value: { key: 'a', start: 0, end: 10, result: { count: 3, sum: 7 } }, timestamp: 9 },
    ]);
    await driver.pushWatermark('clicks', 19);
    const all = driver.output<WindowResult<string, { count: number; sum: number }>>('out');
    expect(all.slice(1).sort((x, y) => x.key.localeCompare(y.key))).toEqual([
      { key: 'a', start: 10, end: 20, result: { count: 1, sum: 8 } },
      { key: 'b', start: 10, end: 20, result: { count: 1, sum: 10 } },
    ]);
    await driver.close();
  });

  it('a firing of more windows than one hand-over chunk delivers each window once, before the watermark moves on', async () => {
    const driver = await TestDriver.start(windowJob(tumbling(10)), { parallelism: { default: 1, sum: 1 } });
    const keys = 3 * 1_024 + 5;
    await driver.push('clicks', Array.from({ length: keys * 2 }, (_, i) => at(`u${i % keys}`, i, i % 10)));
    await driver.pushWatermark('clicks', 9);
    const results = driver.output<WindowResult<string, { count: number; sum: number }>>('out');
    expect(results).toHaveLength(keys);
    expect(new Set(results.map((r) => r.key)).size).toBe(keys);
    expect(results.every((r) => r.result.count === 2 && r.start === 0)).toBe(true);
    await driver.close();
  });

  it('records one event-time latency per result when a firing hands many results to the sink at once', async () => {
    const driver = await TestDriver.start(windowJob(tumbling(10)));
    await driver.push('clicks', [at('a', 1, 3), at('b', 2, 4), at('c', 3, 5), at('a', 4, 12)]);
    await driver.pushWatermark('clicks', 19);
    expect(driver.output('out')).toHaveLength(4);
    const window = driver.job.metrics().find((m) => m.operatorId === 'sum')!;
    const latencies = new LatencyRecorder();
    latencies.addEncoded(window.eventTimeLatency);
    expect(latencies.count).toBe(4);
    latencies.destroy();
    await driver.close();
  });

  it('re-fires on late records within the allowed lateness and sends later ones to the side output', async () => {
    const driver = await TestDriver.start(windowJob(tumbling(10), 5));
    await driver.push('clicks', [at('a', 1, 2)]);
    await driver.pushWatermark('clicks', 10);
    expect(driver.output('out')).toEqual([{ key: 'a', start: 0, end: 10, result: { count: 1, sum: 1 } }]);
    // Late but within lateness (end - 1 + 5 = 14 > watermark 10): updates and fires again at once.
    await driver.push('clicks', [at('a', 5, 7)]);
    expect(driver.output('out')).toHaveLength(2);
    expect(driver.output('out')[1]).toEqual({ key: 'a', start: 0, end: 10, result: { count: 2, sum: 6 } });
    // Watermark 14 passes the cleanup time: the window is purged; a record for it now is too late.
    await driver.pushWatermark('clicks', 14);
    await driver.push('clicks', [at('a', 100, 8)]);
    expect(driver.output('out')).toHaveLength(2);
    expect(driver.output('late')).toEqual([{ user: 'a', n: 100 }]);
    await driver.close();
  });

  it('drops nothing silently: without lateness a late record goes to the side output', async () => {
    const driver = await TestDriver.start(windowJob(tumbling(10)));
    await driver.push('clicks', [at('a', 1, 2)]);
    await driver.pushWatermark('clicks', 9);
    await driver.push('clicks', [at('a', 3, 5), at('a', 4, 15)]);
    expect(driver.output('late')).toEqual([{ user: 'a', n: 3 }]);
    await driver.end('clicks');
    expect(driver.output('out')).toEqual([
      { key: 'a', start: 0, end: 10, result: { count: 1, sum: 1 } },
      { key: 'a', start: 10, end: 20, result: { count: 1, sum: 4 } },
    ]);
  });
});

describe('sliding windows', () => {
  it('assign each record to size/slide windows', async () => {
    const driver = await TestDriver.start(windowJob(sliding(10, 5)));
    await driver.push('clicks', [at('a', 1, 3), at('a', 2, 7), at('a', 4, 12)]);
    await driver.end('clicks');
    expect(driver.output('out')).toEqual([
      { key: 'a', start: -5, end: 5, result: { count: 1, sum: 1 } },
      { key: 'a', start: 0, end: 10, result: { count: 2, sum: 3 } },
      { key: 'a', start: 5, end: 15, result: { count: 2, sum: 6 } },
      { key: 'a', start: 10, end: 20, result: { count: 1, sum: 4 } },
    ]);
  });
});

describe('session windows', () => {
  it('merge sessions that come within the gap, including a late bridge record', async () => {
    const driver = await TestDriver.start(windowJob(session(5)));
    await driver.push('clicks', [at('a', 1, 0), at('a', 2, 3), at('a', 4, 20), at('a', 8, 12), at('b', 16, 1)]);
    // a: [0,8) from 0 and 3; [12,17) from 12; [20,25) from 20. Then 16 bridges [12,17) and [20,25) into [12,25).
    await driver.push('clicks', [at('a', 32, 16)]);
    await driver.end('clicks');
    const out = driver.output<WindowResult<string, { count: number; sum: number }>>('out');
    expect(out.filter((r) => r.key === 'a')).toEqual([
      { key: 'a', start: 0, end: 8, result: { count: 2, sum: 3 } },
      { key: 'a', start: 12, end: 25, result: { count: 3, sum: 44 } },
    ]);
    expect(out.filter((r) => r.key === 'b')).toEqual([{ key: 'b', start: 1, end: 6, result: { count: 1, sum: 16 } }]);
  });
});

describe('reduce and processWindow', () => {
  it('compute the same windows through the other window functions', async () => {
    const job = defineJob({ name: 'fns' }, (b) => {
      const keyed = b.source<Click>('clicks', memorySource()).keyBy('k', (c) => c.user);
      keyed.window('max', tumbling(10), reduce<string, Click>((x, y) => (x.n >= y.n ? x : y))).sink('max-out', memorySink());
      keyed
        .window('all', tumbling(10), processWindow<string, Click, string>((key, w, els) => [`${key}@${w.start}:${els.map((e) => e.n).join(',')}`]))
        .sink('all-out', memorySink());
    });
    const driver = await TestDriver.start(job);
    await driver.push('clicks', [at('a', 3, 1), at('a', 9, 2), at('a', 1, 4), at('a', 5, 11)]);
    await driver.end('clicks');
    expect(driver.output('max-out')).toEqual([
      { key: 'a', start: 0, end: 10, result: { user: 'a', n: 9 } },
      { key: 'a', start: 10, end: 20, result: { user: 'a', n: 5 } },
    ]);
    expect(driver.output('all-out')).toEqual(['a@0:3,9,1', 'a@10:5']);
  });
});

import { describe, expect, it } from 'vitest';
import { aggregate, defineJob, encodeKey, JobDefinitionError, keyGroupFor, memorySink, memorySource, reduce, session, sliding, tumbling, type WindowAssigner, type WindowResult } from '../../index';
import { KeySplitError } from '../../keygroups';
import { TestDriver } from '../../testing';

interface Click {
  user: string;
  n: number;
}
type Totals = { count: number; sum: number; max: number };

/** In-place accumulators, as a demanding job writes them: the merge must not lean on a fresh object either. */
const totals = aggregate<string, Click, Totals, Totals>({
  createAccumulator: () => ({ count: 0, sum: 0, max: Number.NEGATIVE_INFINITY }),
  add: (v, a) => {
    a.count++;
    a.sum += v.n;
    a.max = Math.max(a.max, v.n);
    return a;
  },
  merge: (a, b) => {
    a.count += b.count;
    a.sum += b.sum;
    a.max = Math.max(a.max, b.max);
    return a;
  },
  getResult: (a) => ({ ...a }),
});

const MAX_PARALLELISM = 16;
const kgOf = (key: string) => keyGroupFor(encodeKey(key), MAX_PARALLELISM);

function job(assigner: WindowAssigner = tumbling(10)) {
  return defineJob({ name: 'split', maxParallelism: MAX_PARALLELISM }, (b) =>
    b
      .source<Click>('clicks', memorySource())
      .keyBy('by-user', (c) => c.user)
      .window('totals', assigner, totals, { splittable: true })
      .sink('out', memorySink()),
  );
}

/** A seeded stream: `hot` has about half of all records, twelve others share the rest; event time rises slowly. */
function clicks(count: number, seed = 7): { value: Click; timestamp: number }[] {
  let s = seed;
  const next = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  return Array.from({ length: count }, (_, i) => {
    const user = next() < 0.5 ? 'hot' : `u${Math.floor(next() * 12)}`;
    return { value: { user, n: Math.floor(next() * 100) }, timestamp: Math.floor(i / 7) };
  });
}

/** Key groups owned by subtasks other than the hot key's own, one per subtask, under the driver's routing. */
function partsOn(driver: TestDriver, key: string, count: number): number[] {
  const table = driver.routingTable('totals');
  const own = kgOf(key);
  const parts = [own];
  const used = new Set([table.ownerOf(own)]);
  for (let kg = 0; kg < MAX_PARALLELISM && parts.length < count; kg++) {
    if (used.has(table.ownerOf(kg))) continue;
    used.add(table.ownerOf(kg));
    parts.push(kg);
  }
  return parts;
}

const byWindowAndKey = (out: WindowResult<string, Totals>[]) =>
  [...out].sort((x, y) => x.start - y.start || x.key.localeCompare(y.key));

async function reference(input: { value: Click; timestamp: number }[], assigner?: WindowAssigner): Promise<WindowResult<string, Totals>[]> {
  const driver = await TestDriver.start(job(assigner), { parallelism: { default: 1, totals: 4 } });
  await driver.push('clicks', input);
  await driver.end('clicks');
  return byWindowAndKey(driver.output('out'));
}

describe('splittable windows: a hot key split over several subtasks, its partials merged downstream', () => {
  it('spreads the hot key over four subtasks, and the results equal those without the split', async () => {
    const input = clicks(4_000);
    const expected = await reference(input);
    const driver = await TestDriver.start(job(), { parallelism: { default: 1, totals: 4 } });
    const parts = partsOn(driver, 'hot', 4);
    driver.splitKeys('totals', [{ key: 'hot', keyGroup: kgOf('hot'), parts, weights: [0.25, 0.25, 0.25, 0.25] }]);
    await driver.push('clicks', input);
    // Every subtask holds part of the hot key's load now.
    const byTotals = driver.job.metrics().filter((m) => m.operatorId === 'totals');
    expect(byTotals.filter((m) => m.recordsIn > 500).length).toBe(4);
    await driver.end('clicks');
    expect(byWindowAndKey(driver.output('out'))).toEqual(expected);
  });

  it('splits, folds back and splits again mid-stream, with a key-group move between: still exact', async () => {
    const input = clicks(6_000, 11);
    const expected = await reference(input);
    const driver = await TestDriver.start(job(), { parallelism: { default: 1, totals: 4 } });
    const parts = partsOn(driver, 'hot', 3);
    await driver.push('clicks', input.slice(0, 1_000));
    driver.splitKeys('totals', [{ key: 'hot', keyGroup: kgOf('hot'), parts, weights: [0.2, 0.4, 0.4] }]);
    await driver.push('clicks', input.slice(1_000, 2_500));
    // A host key group moves with its partial windows.
    const table = driver.routingTable('totals');
    await driver.moveKeyGroups('totals', [{ keyGroup: parts[1], toSubtask: (table.ownerOf(parts[1]) + 1) % 4 }]);
    await driver.push('clicks', input.slice(2_500, 4_000));
    driver.splitKeys('totals', []);
    await driver.push('clicks', input.slice(4_000, 5_000));
    driver.splitKeys('totals', [{ key: 'hot', keyGroup: kgOf('hot'), parts: [...parts].reverse(), weights: [0.5, 0.25, 0.25] }]);
    await driver.push('clicks', input.slice(5_000));
    await driver.end('clicks');
    expect(byWindowAndKey(driver.output('out'))).toEqual(expected);
  });

  it('a checkpoint taken while split restores at another parallelism without the split: each window once, complete', async () => {
    const input = clicks(3_000, 5);
    const expected = await reference(input);
    const first = await TestDriver.start(job(), { parallelism: { default: 1, totals: 4 } });
    first.splitKeys('totals', [{ key: 'hot', keyGroup: kgOf('hot'), parts: partsOn(first, 'hot', 4), weights: [0.25, 0.25, 0.25, 0.25] }]);
    await first.push('clicks', input.slice(0, 1_700));
    const snapshot = await first.checkpoint(1);
    // After the barrier: not in the checkpoint, so replayed below.
    await first.push('clicks', input.slice(1_700, 2_200));
    await first.close();
    const second = await TestDriver.start(job(), { parallelism: { default: 1, totals: 3 }, restore: snapshot });
    await second.push('clicks', input.slice(1_700));
    await second.end('clicks');
    // Windows that closed before the checkpoint were emitted by the first run; the rest by the second, once each.
    const emitted = [...first.output<WindowResult<string, Totals>>('out'), ...second.output<WindowResult<string, Totals>>('out')];
    expect(byWindowAndKey(emitted)).toEqual(expected);
  });

  it('works for sliding windows and reduce()', async () => {
    const input = clicks(2_000, 3);
    const expected = await reference(input, sliding(20, 5));
    const driver = await TestDriver.start(job(sliding(20, 5)), { parallelism: { default: 1, totals: 4 } });
    driver.splitKeys('totals', [{ key: 'hot', keyGroup: kgOf('hot'), parts: partsOn(driver, 'hot', 2), weights: [0.5, 0.5] }]);
    await driver.push('clicks', input);
    await driver.end('clicks');
    expect(byWindowAndKey(driver.output('out'))).toEqual(expected);

    const maxJob = defineJob({ name: 'max', maxParallelism: MAX_PARALLELISM }, (b) =>
      b
        .source<Click>('clicks', memorySource())
        .keyBy('by-user', (c) => c.user)
        .window('max', tumbling(10), reduce<string, Click>((a, c) => (c.n > a.n ? c : a)), { splittable: true })
        .map('n', (r) => ({ key: r.key, start: r.start, n: r.result.n }))
        .sink('out', memorySink()),
    );
    const split = await TestDriver.start(maxJob, { parallelism: { default: 1, max: 4 } });
    split.splitKeys('max', [{ key: 'hot', keyGroup: kgOf('hot'), parts: [kgOf('hot'), (kgOf('hot') + 8) % 16], weights: [0.5, 0.5] }]);
    await split.push('clicks', input);
    await split.end('clicks');
    const want = new Map<string, number>();
    for (const { value, timestamp } of input) {
      const id = `${value.user}@${timestamp - (timestamp % 10)}`;
      want.set(id, Math.max(want.get(id) ?? -1, value.n));
    }
    const got = new Map(split.output<{ key: string; start: number; n: number }>('out').map((r) => [`${r.key}@${r.start}`, r.n]));
    expect(got).toEqual(want);
  });

  it('refuses what cannot be split, saying why', async () => {
    const define = (assigner: WindowAssigner, options: object, fn = totals) => () =>
      defineJob({ name: 'bad', maxParallelism: MAX_PARALLELISM }, (b) =>
        b.source<Click>('clicks', memorySource()).keyBy('k', (c) => c.user).window('w', assigner, fn, { splittable: true, ...options }).sink('out', memorySink()),
      );
    const noMerge = aggregate<string, Click, number, number>({ createAccumulator: () => 0, add: (_, a) => a + 1, getResult: (a) => a });
    expect(define(tumbling(10), {}, noMerge as never)).toThrow(/needs merge\(\)/);
    expect(define(session(10), {})).toThrow(/session windows/);
    expect(define(tumbling(10), { allowedLatenessMs: 5 })).toThrow(JobDefinitionError);

    const driver = await TestDriver.start(job(), { parallelism: { default: 1, totals: 2 } });
    expect(() => driver.splitKeys('totals', [{ key: 'hot', keyGroup: kgOf('hot'), parts: [1, 1], weights: [0.5, 0.5] }])).toThrow(KeySplitError);
    expect(() => driver.splitKeys('totals', [{ key: 'hot', keyGroup: kgOf('hot'), parts: [1, 2], weights: [0.5, 0.6] }])).toThrow(/sum to 1/);
    expect(() => driver.splitKeys('totals-merge', [])).toThrow(/not a splittable window/);
    await driver.close();
  });
});

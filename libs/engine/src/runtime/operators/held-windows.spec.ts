import { describe, expect, it } from 'vitest';
import { createStateBackend } from '@weir/state';
import type { SubtaskMetrics } from '@weir/metrics';
import { aggregate, defineJob, encodeKey, keyGroupFor, memorySink, memorySource, sliding, tumbling, type WindowResult } from '../../index';
import type { KeyValue } from '../../keygroups';
import type { WindowFunctionSpec } from '../../sdk/windows';
import { TestDriver } from '../../testing';
import type { KeyedRecord, StreamRecord } from '../records';
import { windowOperator } from './window-operator';

interface Click {
  user: string;
  n: number;
}
type Totals = { count: number; sum: number };

const sumCount = aggregate<string, Click, Totals, Totals>({
  createAccumulator: () => ({ count: 0, sum: 0 }),
  add: (v, a) => ({ count: a.count + 1, sum: a.sum + v.n }),
  getResult: (a) => a,
});

const MAX_PARALLELISM = 16;
const at = (user: string, n: number, timestamp: number) => ({ value: { user, n }, timestamp });
const kgOf = (key: string) => keyGroupFor(encodeKey(key), MAX_PARALLELISM);

function windowJob(lateness = 0) {
  return defineJob({ name: 'held', maxParallelism: MAX_PARALLELISM }, (b) =>
    b
      .source<Click>('clicks', memorySource())
      .keyBy('by-user', (c) => c.user)
      .window('sum', tumbling(10), sumCount, { allowedLatenessMs: lateness })
      .sink('out', memorySink()),
  );
}

/** Two keys whose key groups fall to different subtasks at parallelism 2. */
function keysInDifferentHalves(): [string, string] {
  const low = Array.from({ length: 100 }, (_, i) => `k${i}`).find((k) => kgOf(k) < MAX_PARALLELISM / 2)!;
  const high = Array.from({ length: 100 }, (_, i) => `k${i}`).find((k) => kgOf(k) >= MAX_PARALLELISM / 2)!;
  return [low, high];
}

describe('in-memory windows and the state backend', () => {
  it('a key-group snapshot taken mid-window holds the open windows; restoring it rolls them back', async () => {
    const driver = await TestDriver.start(windowJob());
    await driver.push('clicks', [at('a', 1, 1), at('a', 2, 2), at('b', 5, 3)]);
    const image = await driver.snapshotKeyGroup('sum', kgOf('a'));
    await driver.push('clicks', [at('a', 4, 4)]);
    await driver.restoreKeyGroup('sum', kgOf('a'), image);
    await driver.push('clicks', [at('a', 8, 5)]);
    await driver.pushWatermark('clicks', 9);
    const out = driver.output<WindowResult<string, Totals>>('out').sort((x, y) => x.key.localeCompare(y.key));
    expect(out).toEqual([
      { key: 'a', start: 0, end: 10, result: { count: 3, sum: 11 } },
      { key: 'b', start: 0, end: 10, result: { count: 1, sum: 5 } },
    ]);
    await driver.close();
  });

  it('a snapshot restores into a fresh job, which fires the window with everything before the snapshot', async () => {
    const first = await TestDriver.start(windowJob());
    await first.push('clicks', [at('a', 1, 1), at('a', 2, 12)]);
    const image = await first.snapshotKeyGroup('sum', kgOf('a'));
    await first.close();
    const second = await TestDriver.start(windowJob());
    await second.restoreKeyGroup('sum', kgOf('a'), image);
    await second.push('clicks', [at('a', 4, 3)]);
    await second.end('clicks');
    expect(second.output('out')).toEqual([
      { key: 'a', start: 0, end: 10, result: { count: 2, sum: 5 } },
      { key: 'a', start: 10, end: 20, result: { count: 1, sum: 2 } },
    ]);
  });

  it('open windows move with their key group and fire once, on the new owner', async () => {
    const [x, y] = keysInDifferentHalves();
    const driver = await TestDriver.start(windowJob(), { parallelism: { default: 1, sum: 2 } });
    await driver.push('clicks', [at(x, 1, 1), at(y, 10, 2)]);
    await driver.moveKeyGroups('sum', [{ keyGroup: kgOf(x), toSubtask: 1 }]);
    await driver.push('clicks', [at(x, 2, 3)]);
    await driver.pushWatermark('clicks', 9);
    const out = driver.output<WindowResult<string, Totals>>('out');
    expect(out.filter((r) => r.key === x)).toEqual([{ key: x, start: 0, end: 10, result: { count: 2, sum: 3 } }]);
    expect(out.filter((r) => r.key === y)).toEqual([{ key: y, start: 0, end: 10, result: { count: 1, sum: 10 } }]);
    await driver.close();
  });

  it('a checkpoint holds the open windows and restores at another parallelism; each window fires once, complete', async () => {
    const users = Array.from({ length: 12 }, (_, i) => `u${i}`);
    const first = await TestDriver.start(windowJob(), { parallelism: { default: 1, sum: 2 } });
    await first.push('clicks', users.map((u, i) => at(u, i, 1)));
    const snapshot = await first.checkpoint(1);
    // After the barrier: not in the checkpoint.
    await first.push('clicks', users.map((u) => at(u, 1000, 2)));
    await first.close();
    const second = await TestDriver.start(windowJob(), { parallelism: { default: 1, sum: 3 }, restore: snapshot });
    await second.push('clicks', users.map((u) => at(u, 100, 3)));
    await second.end('clicks');
    const out = second.output<WindowResult<string, Totals>>('out').sort((x, y) => x.key.localeCompare(y.key));
    expect(out).toEqual(
      users.map((u, i) => ({ key: u, start: 0, end: 10, result: { count: 2, sum: i + 100 } })).sort((x, y) => x.key.localeCompare(y.key)),
    );
  });

  it('a purged window leaves nothing behind in a later snapshot', async () => {
    const driver = await TestDriver.start(windowJob(5));
    await driver.push('clicks', [at('a', 1, 1)]);
    const withWindow = await driver.snapshotKeyGroup('sum', kgOf('a'));
    await driver.pushWatermark('clicks', 14);
    const afterPurge = await driver.snapshotKeyGroup('sum', kgOf('a'));
    expect(afterPurge.length).toBeLessThan(withWindow.length);
    // Restoring the purged image and ending the input fires nothing more for that window.
    await driver.restoreKeyGroup('sum', kgOf('a'), afterPurge);
    await driver.end('clicks');
    expect(driver.output('out')).toEqual([{ key: 'a', start: 0, end: 10, result: { count: 1, sum: 1 } }]);
  });
});

describe('what the backend receives after a first persist', () => {
  it('a second snapshot carries changes made after the first (changed keys are written again)', async () => {
    const driver = await TestDriver.start(windowJob());
    await driver.push('clicks', [at('a', 1, 1)]);
    await driver.snapshotKeyGroup('sum', kgOf('a'));
    await driver.push('clicks', [at('a', 2, 2)]);
    const second = await driver.snapshotKeyGroup('sum', kgOf('a'));
    await driver.close();
    const fresh = await TestDriver.start(windowJob());
    await fresh.restoreKeyGroup('sum', kgOf('a'), second);
    await fresh.end('clicks');
    expect(fresh.output('out')).toEqual([{ key: 'a', start: 0, end: 10, result: { count: 2, sum: 3 } }]);
  });

  it('a key that loses one of its sliding windows keeps the other in a later snapshot', async () => {
    const job = defineJob({ name: 'held-sliding', maxParallelism: MAX_PARALLELISM }, (b) =>
      b.source<Click>('clicks', memorySource()).keyBy('by-user', (c) => c.user).window('sum', sliding(10, 5), sumCount).sink('out', memorySink()),
    );
    const driver = await TestDriver.start(job);
    await driver.push('clicks', [at('a', 1, 7)]); // windows [0, 10) and [5, 15)
    await driver.snapshotKeyGroup('sum', kgOf('a'));
    await driver.pushWatermark('clicks', 9); // [0, 10) fires and goes
    const image = await driver.snapshotKeyGroup('sum', kgOf('a'));
    await driver.close();
    const fresh = await TestDriver.start(job);
    await fresh.restoreKeyGroup('sum', kgOf('a'), image);
    await fresh.end('clicks');
    expect(fresh.output('out')).toEqual([{ key: 'a', start: 5, end: 15, result: { count: 1, sum: 1 } }]);
  });
});

describe('spilling beyond the in-memory limit', () => {
  async function operator(maxHeldKeys: number, fn: WindowFunctionSpec<KeyValue, unknown, unknown>, assigner = tumbling(10)) {
    const backend = await createStateBackend({ kind: 'memory' });
    const out: StreamRecord[] = [];
    const metrics = {} as SubtaskMetrics;
    const op = windowOperator(
      {
        tenantId: 't',
        jobId: 'j',
        subtask: 0,
        clock: { now: () => 0 },
        deadLetters: { add: () => undefined, emit: async () => undefined },
        metrics,
        operatorId: 'sum',
        parallelism: 1,
        backend,
        maxParallelism: MAX_PARALLELISM,
        ownedKeyGroups: new Set(Array.from({ length: MAX_PARALLELISM }, (_, i) => i)),
        emit: (records) => out.push(...records),
        emitSide: () => undefined,
        emitOutputs: async () => undefined,
      },
      assigner,
      fn,
      {},
      maxHeldKeys,
    );
    return { op, out, backend };
  }

  const record = (user: string, n: number, timestamp: number): KeyedRecord => {
    const keyBytes = encodeKey(user);
    return { value: { user, n }, timestamp, ingestMs: 0, key: user, keyBytes, keyGroup: keyGroupFor(keyBytes, MAX_PARALLELISM) };
  };

  it('spills keys beyond the limit and reads them back when touched or fired', async () => {
    const { op, out } = await operator(4, sumCount as WindowFunctionSpec<KeyValue, unknown, unknown>);
    await op.open();
    const users = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    for (const [i, u] of users.entries()) await op.processBatch([record(u, i + 1, 1)]);
    // Touch spilled keys again (they come back through prefetch), then fire everything.
    await op.processBatch([record('a', 10, 2), record('b', 20, 3), record('h', 30, 4)]);
    await op.advanceWatermark(9);
    const results = out.map((r) => r.value as WindowResult<string, Totals>).sort((x, y) => x.key.localeCompare(y.key));
    expect(results.map((r) => [r.key, r.result.count, r.result.sum])).toEqual([
      ['a', 2, 11],
      ['b', 2, 22],
      ['c', 1, 3],
      ['d', 1, 4],
      ['e', 1, 5],
      ['f', 1, 6],
      ['g', 1, 7],
      ['h', 2, 38],
    ]);
  });

  it('a snapshot of a spilling operator holds every key, spilled or not, and restores into another', async () => {
    const fn = sumCount as WindowFunctionSpec<KeyValue, unknown, unknown>;
    const { op } = await operator(2, fn, sliding(10, 5));
    await op.open();
    for (const [i, u] of ['a', 'b', 'c', 'd', 'e'].entries()) await op.processBatch([record(u, i + 1, 7)]);
    const images = await op.snapshotOwnedKeyGroups();
    const copy = await operator(3, fn, sliding(10, 5));
    await copy.op.open();
    for (const [kg, image] of images) await copy.op.adoptKeyGroup(kg, image);
    await copy.op.processBatch([record('a', 100, 8)]);
    await copy.op.advanceWatermark(Number.POSITIVE_INFINITY);
    const results = copy.out.map((r) => r.value as WindowResult<string, Totals>);
    expect(results).toHaveLength(10);
    expect(results.filter((r) => r.key === 'a').map((r) => [r.start, r.result.sum])).toEqual([
      [0, 101],
      [5, 101],
    ]);
    expect(results.filter((r) => r.key === 'e').map((r) => [r.start, r.result.count])).toEqual([
      [0, 1],
      [5, 1],
    ]);
  });
  it('a key group adopted by a subtask whose event time is ahead fires its open windows there, once', async () => {
    const fn = sumCount as WindowFunctionSpec<KeyValue, unknown, unknown>;
    const { op } = await operator(100, fn);
    await op.open();
    await op.processBatch([record('a', 5, 3)]);
    const images = await op.snapshotOwnedKeyGroups();
    const kg = record('a', 0, 0).keyGroup;
    // The adopter has read further: its watermark passed the window [0, 10) before the key group arrives.
    const ahead = await operator(100, fn);
    await ahead.op.open();
    await ahead.op.advanceWatermark(25);
    await ahead.op.adoptKeyGroup(kg, images.get(kg)!);
    await ahead.op.advanceWatermark(30);
    await ahead.op.advanceWatermark(Number.POSITIVE_INFINITY);
    const results = ahead.out.map((r) => r.value as WindowResult<string, Totals>);
    expect(results.map((r) => [r.key, r.start, r.result.count, r.result.sum])).toEqual([['a', 0, 1, 5]]);
  });
  it('refuses to hand over a key group it does not own (an empty image would restart it from nothing)', async () => {
    const { op } = await operator(100, sumCount as WindowFunctionSpec<KeyValue, unknown, unknown>);
    await op.open();
    const kg = record('a', 0, 0).keyGroup;
    await op.processBatch([record('a', 5, 3)]);
    expect((await op.releaseKeyGroup(kg)).byteLength).toBeGreaterThan(0);
    await expect(op.releaseKeyGroup(kg)).rejects.toThrow(`does not own key group ${kg}`);
  });
});

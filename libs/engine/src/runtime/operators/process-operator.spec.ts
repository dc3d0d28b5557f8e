import { describe, expect, it } from 'vitest';
import {
  defineJob,
  encodeKey,
  keyGroupFor,
  type KeyedProcessFunction,
  memorySink,
  memorySource,
  valueState,
} from '../../index';
import { TestDriver } from '../../testing';

const count = valueState<number>('count');

/** Counts per key; every element (re)registers an event-time timer at timestamp + 10 that reports the count. */
const counting: KeyedProcessFunction<string, string, string> = {
  states: [count],
  processElement(_value, ctx, out) {
    const n = (ctx.state(count).value() ?? 0) + 1;
    ctx.state(count).update(n);
    ctx.timers.registerEventTimeTimer(ctx.timestamp + 10);
    out.collect(`${ctx.key}=${n}@${ctx.operator.subtask}`);
  },
  onTimer(timestamp, domain, ctx, out) {
    out.collect(`${domain}:${ctx.key}:${ctx.state(count).value()}@${timestamp}`);
  },
};

function countingJob(maxParallelism = 16) {
  return defineJob({ name: 'count', maxParallelism }, (b) =>
    b
      .source<string>('in', memorySource())
      .keyBy('k', (v) => v)
      .process('count', counting)
      .sink('out', memorySink()),
  );
}

describe('event-time timers', () => {
  it('fire per key once the watermark reaches them, deduplicated, carrying the timer timestamp', async () => {
    const driver = await TestDriver.start(countingJob());
    await driver.push('in', [
      { value: 'a', timestamp: 1 },
      { value: 'a', timestamp: 1 },
      { value: 'b', timestamp: 5 },
    ]);
    await driver.pushWatermark('in', 10);
    expect(driver.output('out')).toEqual(['a=1@0', 'a=2@0', 'b=1@0']);
    await driver.pushWatermark('in', 11);
    expect(driver.outputRecords('out').slice(3)).toEqual([{ value: 'event:a:2@11', timestamp: 11 }]);
    await driver.pushWatermark('in', 100);
    expect(driver.output('out').slice(4)).toEqual(['event:b:1@15']);
    await driver.close();
  });
});

describe('many timers at once', () => {
  it('a watermark firing more timers than one hand-over chunk delivers each once, in timestamp order', async () => {
    const driver = await TestDriver.start(countingJob());
    const keys = 3 * 1_024 + 7;
    await driver.push('in', Array.from({ length: keys }, (_, i) => ({ value: `k${i}`, timestamp: i % 3 })));
    await driver.pushWatermark('in', 100);
    const fired = driver.output<string>('out').filter((o) => o.startsWith('event:'));
    expect(fired).toHaveLength(keys);
    expect(new Set(fired).size).toBe(keys);
    const at = fired.map((o) => Number(o.slice(o.indexOf('@') + 1)));
    expect(at).toEqual([...at].sort((a, b) => a - b));
    await driver.close();
  });
});

describe('processing-time timers', () => {
  it('fire when the processing clock passes them, and a deleted timer never fires', async () => {
    const fn: KeyedProcessFunction<string, string, string> = {
      processElement(value, ctx) {
        if (value.endsWith('!')) ctx.timers.deleteProcessingTimeTimer(1100);
        else ctx.timers.registerProcessingTimeTimer(ctx.timers.currentProcessingTime + 100);
      },
      onTimer(timestamp, domain, ctx, out) {
        out.collect(`${domain}:${ctx.key}@${timestamp}`);
      },
    };
    const job = defineJob({ name: 'pt' }, (b) =>
      b
        .source<string>('in', memorySource())
        .keyBy('k', (v) => v.replace('!', ''))
        .process('p', fn)
        .sink('out', memorySink()),
    );
    const driver = await TestDriver.start(job, { startTime: 1000 });
    await driver.pushValues('in', ['a', 'b']);
    await driver.advanceProcessingTime(50);
    await driver.pushValues('in', ['b!']);
    expect(driver.output('out')).toEqual([]);
    await driver.advanceProcessingTime(50);
    expect(driver.output('out')).toEqual(['processing:a@1100']);
    await driver.close();
  });
});

describe('state TTL', () => {
  it('expires a value ttl ms after its last write (processing time)', async () => {
    const seen = valueState<number>('seen', { ttlMs: 100 });
    const job = defineJob({ name: 'ttl' }, (b) =>
      b
        .source<string>('in', memorySource())
        .keyBy('k', (v) => v)
        .process<number>('p', {
          states: [seen],
          processElement(_v, ctx, out) {
            const n = (ctx.state(seen).value() ?? 0) + 1;
            ctx.state(seen).update(n);
            out.collect(n);
          },
        })
        .sink('out', memorySink()),
    );
    const driver = await TestDriver.start(job);
    await driver.pushValues('in', ['a']);
    await driver.advanceProcessingTime(99);
    await driver.pushValues('in', ['a']); // refreshed: expires at 199
    await driver.advanceProcessingTime(99); // now 198
    await driver.pushValues('in', ['a']);
    await driver.advanceProcessingTime(100); // now 298 ≥ 198 + 100
    await driver.pushValues('in', ['a']);
    expect(driver.output('out')).toEqual([1, 2, 3, 1]);
    await driver.close();
  });

  it('refuses state the function did not declare, as a dead letter naming it', async () => {
    const job = defineJob({ name: 'undeclared' }, (b) =>
      b
        .source<string>('in', memorySource())
        .keyBy('k', (v) => v)
        .process<number>('p', {
          processElement(_v, ctx, out) {
            out.collect(ctx.state(count).value() ?? 0);
          },
        })
        .sink('out', memorySink()),
    );
    const driver = await TestDriver.start(job);
    await driver.pushValues('in', ['a']);
    expect(driver.deadLetters()[0].error).toMatch(/UndeclaredStateError.*"count"/);
    await driver.close();
  });
});

/** Two keys whose key groups differ and are owned by different subtasks at parallelism 2 of 16. */
function keysInDifferentHalves(): [string, string] {
  const low: string[] = [];
  const high: string[] = [];
  for (let i = 0; low.length === 0 || high.length === 0; i++) {
    const key = `k${i}`;
    (keyGroupFor(encodeKey(key), 16) < 8 ? low : high).push(key);
  }
  return [low[0], high[0]];
}

describe('key-group state', () => {
  it('snapshots and restores one key group alone, leaving the others untouched', async () => {
    const [x, y] = keysInDifferentHalves();
    const kgX = keyGroupFor(encodeKey(x), 16);
    const driver = await TestDriver.start(countingJob(), { parallelism: { default: 1, count: 2 } });
    await driver.pushValues('in', [x, x, y]);
    const image = await driver.snapshotKeyGroup('count', kgX);
    await driver.pushValues('in', [x, y]);
    await driver.restoreKeyGroup('count', kgX, image);
    await driver.pushValues('in', [x, y]);
    // The two keys live on different subtasks, so only the order per key is defined.
    const outputs = driver.output<string>('out').map((s) => s.split('@')[0]);
    expect(outputs.filter((s) => s.startsWith(`${x}=`))).toEqual([`${x}=1`, `${x}=2`, `${x}=3`, `${x}=3`]);
    expect(outputs.filter((s) => s.startsWith(`${y}=`))).toEqual([`${y}=1`, `${y}=2`, `${y}=3`]);
    await driver.close();
  });

  it('moves a key group to another subtask while running: routing changes, state and timers follow', async () => {
    const [x] = keysInDifferentHalves();
    const kgX = keyGroupFor(encodeKey(x), 16);
    const driver = await TestDriver.start(countingJob(), { parallelism: { default: 1, count: 2 } });
    await driver.push('in', [{ value: x, timestamp: 5 }]);
    expect(driver.routingTable('count').ownerOf(kgX)).toBe(0);
    const table = await driver.moveKeyGroups('count', [{ keyGroup: kgX, toSubtask: 1 }]);
    expect(table.version).toBe(2);
    expect(table.ownerOf(kgX)).toBe(1);
    await driver.push('in', [{ value: x, timestamp: 6 }]);
    await driver.pushWatermark('in', 20);
    expect(driver.output('out')).toEqual([`${x}=1@0`, `${x}=2@1`, `event:${x}:2@15`, `event:${x}:2@16`]);
    const metrics = driver.job.metrics().filter((m) => m.operatorId === 'count');
    expect(metrics[1].keyGroupCounts[kgX]).toBe(1);
    await driver.close();
  });
});

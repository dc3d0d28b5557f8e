import { describe, expect, it } from 'vitest';
import { memoryIoOf } from './memory-io';
import { defineJob, encodeKey, keyGroupFor, type KeyedProcessFunction, memorySink, memorySource, valueState } from '../index';
import { TestDriver } from '../testing';

const count = valueState<number>('count');
const counting: KeyedProcessFunction<string, string, string> = {
  states: [count],
  processElement(_v, ctx, out) {
    const n = (ctx.state(count).value() ?? 0) + 1;
    ctx.state(count).update(n);
    out.collect(`${ctx.key}=${n}`);
  },
};

const job = defineJob({ name: 'cp', maxParallelism: 8 }, (b) =>
  b
    .source<string>('in', memorySource())
    .keyBy('k', (v) => v)
    .process('count', counting)
    .sink('out', memorySink()),
);

const kgOf = (key: string) => keyGroupFor(encodeKey(key), 8);

describe('aligned checkpoint barriers', () => {
  it('cut every input channel at its barrier: records before it are in the snapshot, records after it are not', async () => {
    const driver = await TestDriver.start(job, { parallelism: { default: 2, count: 1 } });
    await driver.pushValues('in', ['a'], 0);
    await driver.pushValues('in', ['a'], 1);
    const { job: running } = driver;
    memoryIoOf(running).push('in', [{ value: 'a' }], 1); // before the barrier on channel 1
    const checkpoint = running.triggerCheckpoint(1);
    memoryIoOf(running).push('in', [{ value: 'a' }], 0); // after the barrier on channel 0
    memoryIoOf(running).push('in', [{ value: 'b' }], 1); // after the barrier on channel 1
    const snapshot = await checkpoint;
    await memoryIoOf(running).quiet();

    expect(driver.output('out')).toEqual(expect.arrayContaining(['a=4', 'b=1']));
    const keyed = snapshot.subtasks.find((s) => s.stageId === 'count')!;
    expect([...keyed.keyGroups!.keys()]).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(snapshot.subtasks.filter((s) => s.stageId === 'in').map((s) => s.sourcePositions)).toEqual([{}, {}]);

    // Restoring the cut elsewhere continues from a = 3 and knows nothing of b.
    const restored = await TestDriver.start(job);
    await restored.restoreKeyGroup('count', kgOf('a'), keyed.keyGroups!.get(kgOf('a'))!);
    if (kgOf('b') !== kgOf('a')) await restored.restoreKeyGroup('count', kgOf('b'), keyed.keyGroups!.get(kgOf('b'))!);
    await restored.pushValues('in', ['a', 'b']);
    expect(restored.output('out')).toEqual(['a=4', 'b=1']);
    await restored.close();
    await driver.close();
  });

  it('takes broadcast state into the snapshot of every subtask', async () => {
    const rulesJob = defineJob({ name: 'cp-rules', maxParallelism: 8 }, (b) => {
      const rules = b.source<number>('rules', memorySource()).broadcast();
      b.source<string>('in', memorySource())
        .keyBy('k', (v) => v)
        .connect(rules)
        .process<string, string>('judge', {
          processElement(v, ctx, out) {
            out.collect(`${v}:${ctx.broadcastState.get('limit')}`);
          },
          processBroadcastElement(limit, ctx) {
            ctx.broadcastState.put('limit', String(limit));
          },
        })
        .sink('out', memorySink());
    });
    const driver = await TestDriver.start(rulesJob, { parallelism: { default: 1, judge: 2 } });
    await driver.pushValues('rules', [7]);
    const snapshot = await driver.checkpoint(1);
    const judges = snapshot.subtasks.filter((s) => s.stageId === 'judge');
    expect(judges.map((s) => s.operatorState)).toEqual([{ broadcast: [['limit', '7']] }, { broadcast: [['limit', '7']] }]);
    await driver.close();
  });

  it('restores a checkpoint at another parallelism: every key continues from its checkpointed state', async () => {
    const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
    const first = await TestDriver.start(job, { parallelism: { default: 1, count: 2 } });
    await first.pushValues('in', [...keys, ...keys]);
    const snapshot = await first.checkpoint(7);
    await first.close();

    const second = await TestDriver.start(job, { parallelism: { default: 1, count: 3 }, restore: snapshot });
    await second.pushValues('in', keys);
    expect(second.output<string>('out').sort()).toEqual(keys.map((k) => `${k}=3`).sort());
    await second.close();
  });

  it('refuses a checkpoint holding state of an operator the job does not have', async () => {
    const snapshot = { checkpointId: 1, subtasks: [{ stageId: 'gone', subtask: 0, keyGroups: new Map() }] };
    await expect(TestDriver.start(job, { restore: snapshot })).rejects.toThrow(/operators this job does not have: gone/);
  });
});

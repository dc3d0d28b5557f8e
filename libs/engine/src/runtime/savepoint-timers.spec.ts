import { describe, expect, it } from 'vitest';
import { memoryIoOf } from './memory-io';
import { defineJob, type KeyedProcessFunction, memorySink, memorySource } from '../index';
import { TestDriver } from '../testing';

/** Every element registers a processing-time timer 100 ms later that reports its key. */
const reminder: KeyedProcessFunction<string, string, string> = {
  processElement(_value, ctx) {
    ctx.timers.registerProcessingTimeTimer(ctx.timers.currentProcessingTime + 100);
  },
  onTimer(timestamp, domain, ctx, out) {
    out.collect(`${domain}:${ctx.key}@${timestamp}`);
  },
};

const job = defineJob({ name: 'savepoint-timers', maxParallelism: 8 }, (b) =>
  b
    .source<string>('in', memorySource())
    .keyBy('k', (v) => v)
    .process('remind', reminder)
    .sink('out', memorySink()),
);

/** A driver at 1000 ms whose job has a timer for 'a' at 1100 and has passed a stop-with-savepoint barrier. */
async function pastSavepointBarrier() {
  const driver = await TestDriver.start(job, { startTime: 1000, parallelism: { default: 1, remind: 2 } });
  await driver.pushValues('in', ['a']);
  driver.job.pauseSourcesAfterNextBarrier();
  const savepoint = await driver.checkpoint(1);
  return { driver, savepoint };
}

describe('processing-time timers at a stop-with-savepoint', () => {
  it('wait once the subtask has passed the barrier, so only the restored job fires them (no repeated output)', async () => {
    const { driver, savepoint } = await pastSavepointBarrier();
    await driver.advanceProcessingTime(500);
    expect(driver.output('out')).toEqual([]);
    await driver.close();

    const restored = await TestDriver.start(job, { startTime: 1600, restore: savepoint });
    await restored.advanceProcessingTime(0);
    expect(restored.output('out')).toEqual(['processing:a@1100']);
    await restored.close();
  });

  it('fire again when the savepoint failed and the sources resume', async () => {
    const { driver } = await pastSavepointBarrier();
    await driver.advanceProcessingTime(500);
    expect(driver.output('out')).toEqual([]);
    driver.job.resumeSources();
    await memoryIoOf(driver.job).quiet();
    expect(driver.output('out')).toEqual(['processing:a@1100']);
    // Later checkpoints hold nothing back.
    await driver.pushValues('in', ['b']);
    await driver.checkpoint(2);
    await driver.advanceProcessingTime(100);
    expect(driver.output('out')).toEqual(['processing:a@1100', 'processing:b@1600']);
    await driver.close();
  });
});

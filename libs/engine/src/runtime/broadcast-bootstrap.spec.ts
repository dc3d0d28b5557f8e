import { afterEach, describe, expect, it } from 'vitest';
import { memoryIoOf } from './memory-io';
import { createStateBackend } from '@weir/state';
import { defineJob, generatorSource, type KeyedBroadcastProcessFunction, memorySink, runJob, type RunningJob } from '../index';

interface Rule {
  version: number;
}

/** Every output names the rule version that judged the record (0: no rule yet). */
const judge: KeyedBroadcastProcessFunction<string, number, Rule, Rule, number> = {
  processElement(_n, ctx, out) {
    out.collect(ctx.broadcastState.get('rule')?.version ?? 0);
  },
  processBroadcastElement(rule, ctx) {
    ctx.broadcastState.put('rule', rule);
  },
};

/** Data declared first, so its source starts reading first: without the bootstrap it wins the race to the operator. */
function rulesJob(rules: { count?: number; ratePerSec?: number }, records = 3_000) {
  return defineJob({ name: 'bootstrap', maxParallelism: 16 }, (b) => {
    const tx = b.source<number>('tx', generatorSource({ seed: 1, count: records, generate: (i) => i }));
    const broadcast = b.source<Rule>('rules', generatorSource({ seed: 2, ...rules, generate: (i) => ({ version: i + 1 }) })).broadcast();
    tx.keyBy('by-n', (n) => String(n % 7)).connect(broadcast).process('judge', judge).sink('out', memorySink());
  });
}

const jobs: RunningJob[] = [];
const start = async (definition: ReturnType<typeof rulesJob>) => {
  const job = await runJob(definition, {
    tenantId: 't', jobId: 'j', parallelism: { default: 2, judge: 3 },
    state: () => createStateBackend({ kind: 'memory' }),
  });
  jobs.push(job);
  return job;
};

afterEach(async () => {
  await Promise.all(jobs.splice(0).map((j) => j.stop()));
});

describe('broadcast bootstrap on a fresh start', () => {
  it('holds the data sources until every broadcast subtask has passed on what was available: every record is judged by a rule', async () => {
    const job = await start(rulesJob({ count: 4 }));
    await job.done;
    const versions = memoryIoOf(job).collected('out').map((r) => r.value as number);
    expect(versions).toHaveLength(3_000);
    // Both rules subtasks (versions 1, 3 and 2, 4) passed theirs on before any transaction was read.
    expect(versions.filter((v) => v < 3)).toEqual([]);
  });

  it('a paced (or endless) broadcast source releases the data after what was due at start: its first record', async () => {
    const job = await start(rulesJob({ ratePerSec: 1 }, 500));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await memoryIoOf(job).quiet();
    const versions = memoryIoOf(job).collected('out').map((r) => r.value as number);
    expect(versions.length).toBeGreaterThan(0);
    expect(versions.every((v) => v >= 1)).toBe(true);
  });

  it('an empty broadcast source releases the data at once', async () => {
    const job = await start(rulesJob({ count: 0 }, 200));
    await job.done;
    expect(memoryIoOf(job).collected('out').map((r) => r.value)).toEqual(Array(200).fill(0));
  });
});

describe('pause after the next barrier (stop-with-savepoint)', () => {
  it('emits nothing after the barrier until resumed', async () => {
    const job = await runJob(
      defineJob({ name: 'paced', maxParallelism: 8 }, (b) => {
        b.source<number>('gen', generatorSource({ seed: 1, ratePerSec: 2_000, generate: (i) => i })).sink('out', memorySink());
      }),
      { tenantId: 't', jobId: 'p', state: () => createStateBackend({ kind: 'memory' }) },
    );
    jobs.push(job);
    await new Promise((resolve) => setTimeout(resolve, 100));
    job.pauseSourcesAfterNextBarrier();
    const cut = await job.triggerCheckpoint(1);
    const at = Number(cut.subtasks[0].sourcePositions!.index);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await memoryIoOf(job).quiet();
    expect(memoryIoOf(job).collected('out')).toHaveLength(at);
    // Later barriers still pass while paused, at the same position.
    const again = await job.triggerCheckpoint(2);
    expect(again.subtasks[0].sourcePositions).toEqual({ index: String(at) });
    job.resumeSources();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(memoryIoOf(job).collected('out').length).toBeGreaterThan(at);
  });
});

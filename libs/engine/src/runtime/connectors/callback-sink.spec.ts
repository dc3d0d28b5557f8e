import { describe, expect, it } from 'vitest';
import { memoryIoOf } from '../memory-io';
import { createStateBackend } from '@weir/state';
import { aggregate, callbackSink, defineJob, generatorSource, runJob, type SinkResult, tumbling, type WindowResult } from '../../index';

describe('callbackSink', () => {
  it('hands every result to the function, batch by batch, with its event time, and keeps none', async () => {
    const batches: (readonly SinkResult<WindowResult<string, number>>[])[] = [];
    const seen: { key: string; count: number; timestamp: number }[] = [];
    const job = defineJob({ name: 'callback', maxParallelism: 16 }, (b) =>
      b
        .source<number>('n', generatorSource({ seed: 1, count: 1_000, generate: (i) => i, timestamps: (i) => i, watermarks: { maxOutOfOrdernessMs: 0 } }))
        .keyBy('by-parity', (i) => (i % 2 === 0 ? 'even' : 'odd'))
        .window('count', tumbling(100), aggregate<string, number, number, number>({ createAccumulator: () => 0, add: (_, a) => a + 1, getResult: (a) => a }))
        .sink(
          'out',
          callbackSink<WindowResult<string, number>>((batch) => {
            batches.push(batch);
            for (const r of batch) seen.push({ key: r.value.key, count: r.value.result, timestamp: r.timestamp });
          }),
        ),
    );
    const running = await runJob(job, { tenantId: 't', jobId: 'j', state: () => createStateBackend({ kind: 'memory' }) });
    await running.done;
    // 10 windows × 2 keys, 50 records each, stamped with the window's last millisecond.
    expect(seen).toHaveLength(20);
    expect(seen.every((r) => r.count === 50 && (r.timestamp + 1) % 100 === 0)).toBe(true);
    expect(new Set(seen.map((r) => `${r.key}@${r.timestamp}`)).size).toBe(20);
    expect(batches.length).toBeGreaterThan(0);
    expect(memoryIoOf(running).collected('out')).toHaveLength(0);
  });
});

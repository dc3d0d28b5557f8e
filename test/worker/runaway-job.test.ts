/**
 * Runaway jobs on a real worker: one whose code loops forever on a record, one that allocates without end. Each
 * fails with its reason — the stall limit (the worker kills a job host whose event loop stops answering) and the
 * heap limit (V8's, per job host) — and only it: the worker, and a neighbouring job on the same worker, run on; the
 * neighbour's output is exact. The limits are the worker's settings (WEIR_JOB_HOST_STALL_TIMEOUT_MS,
 * WEIR_JOB_HOST_MAX_HEAP_MB), set low here so that the test is quick.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../control-plane/support/control-plane';
import { parseJson, readUntil } from '../support/read-topic';
import { startWorkerFixture, type WorkerFixture } from './worker-fixture';

const run = randomBytes(4).toString('hex');
const TENANT = `t${run}`;
const topic = (name: string) => `t.${TENANT}.${name}`;
const RECORDS = 300;

const jobSource = `
import { defineJob, json, kafkaSink, kafkaSource, param } from '@weir/engine';
type R = { kind: string; n: number };
export default defineJob(
  { name: 'runaway', maxParallelism: 8, parameters: { topics: { in: param.topic(), out: param.topic() } } },
  (job, { topics }) => {
    job.source('in', kafkaSource<R>({ topic: topics.in, format: json() }))
      .map('work', (r) => {
        if (r.kind === 'loop') for (;;) { /* never yields */ }
        if (r.kind === 'grow') { const all: number[][] = []; for (;;) all.push(new Array(100_000).fill(r.n)); }
        return r;
      })
      .sink('out', kafkaSink<R>({ topic: topics.out, format: json() }));
  },
);
`;

describe('runaway jobs at the job host', () => {
  let fixture: WorkerFixture;

  const start = (jobId: string, input: string, output: string) =>
    fixture.app.supervisor.run(
      fixture.runCommand({ jobId, maxParallelism: 8, subtasks: [{ operatorId: 'in', subtask: 0, keyGroups: [] }], config: { topics: { in: topic(input), out: topic(output) } } }),
    );
  const stateOf = (jobId: string) => fixture.app.supervisor.runningSubtasks().find((s) => s.jobId === jobId);

  beforeAll(async () => {
    fixture = await startWorkerFixture({
      tenantId: TENANT, jobId: 'runaway', workerId: `runaway-worker-${run}`, jobSource,
      topics: ['loop', 'grow', 'ok', 'out'].map((name) => ({ topic: topic(name), partitions: 1 })),
      config: { WEIR_JOB_HOST_STALL_TIMEOUT_MS: '4000', WEIR_JOB_HOST_MAX_HEAP_MB: '128' },
    });
    const writer = fixture.kafka.writer({ writerId: `runaway-${run}` });
    await writer.start();
    await writer.send([
      { topic: topic('loop'), partition: 0, value: JSON.stringify({ kind: 'loop', n: 0 }) },
      { topic: topic('grow'), partition: 0, value: JSON.stringify({ kind: 'grow', n: 0 }) },
      ...Array.from({ length: RECORDS }, (_, n) => ({ topic: topic('ok'), partition: 0, value: JSON.stringify({ kind: 'ok', n }) })),
    ]);
    await writer.close();
  });

  afterAll(async () => {
    const admin = fixture?.kafka.admin();
    await admin?.deleteTopics(['looper', 'hog', 'neighbour'].map((job) => `weir.${TENANT}.${job}.dead-letters`)).catch(() => undefined);
    await admin?.close();
    await fixture?.close();
  });

  it('fails the looping and the allocating job with their reasons, and the neighbour runs on exactly', async () => {
    await start('neighbour', 'ok', 'out');
    await Promise.all([start('looper', 'loop', 'out'), start('hog', 'grow', 'out')]);

    const looper = await eventually('the looping job to fail', async () => (stateOf('looper')?.state === 'FAILED' ? stateOf('looper') : undefined));
    expect(looper!.failure).toMatch(/the job's code blocked its job host for \d+\.\d s without yielding \(an endless loop\?\), past the limit of 4 s/);
    const hog = await eventually('the allocating job to fail', async () => (stateOf('hog')?.state === 'FAILED' ? stateOf('hog') : undefined));
    expect(hog!.failure).toBe('the job ran out of memory: its job host reached its heap limit of 128 MiB (WEIR_JOB_HOST_MAX_HEAP_MB) and was stopped');

    // The worker and the neighbour were not touched: every record once, in order, and the neighbour still RUNNING.
    const out = await readUntil(fixture.kafka, topic('out'), 1, (records) => records.length >= RECORDS, 1_000);
    expect(out.map((r) => parseJson<{ n: number }>(r).n)).toEqual(Array.from({ length: RECORDS }, (_, n) => n));
    expect(stateOf('neighbour')?.state).toBe('RUNNING');
  });
});

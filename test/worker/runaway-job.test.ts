/**
 * Runaway jobs on a real worker: one whose code loops forever on a record, one that allocates without end, one that
 * emits a 20 MiB record, and one that poisons its built-ins (JSON.stringify, Array.prototype.push). Each of the first
 * three fails with its reason — the stall limit (the worker kills a job host whose event loop
 * stops answering), the heap limit (V8's, per job host), the sink's record size (Kafka's default) — and only it: the worker, and a neighbouring job on the same worker, run on; the
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
        if (r.kind === 'huge') return { ...r, blob: 'x'.repeat(20 * 1024 * 1024) };
        if (r.kind === 'tamper') {
          // Shared built-ins, poisoned: only this job host's own are.
          JSON.stringify = () => '"tampered"';
          Array.prototype.push = () => 0;
        }
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
      topics: ['loop', 'grow', 'huge', 'tamper', 'ok', 'out'].map((name) => ({ topic: topic(name), partitions: 1 })),
      config: { WEIR_JOB_HOST_STALL_TIMEOUT_MS: '4000', WEIR_JOB_HOST_MAX_HEAP_MB: '128' },
    });
    const writer = fixture.kafka.writer({ writerId: `runaway-${run}` });
    await writer.start();
    await writer.send([
      { topic: topic('loop'), partition: 0, value: JSON.stringify({ kind: 'loop', n: 0 }) },
      { topic: topic('grow'), partition: 0, value: JSON.stringify({ kind: 'grow', n: 0 }) },
      { topic: topic('huge'), partition: 0, value: JSON.stringify({ kind: 'huge', n: 0 }) },
      { topic: topic('tamper'), partition: 0, value: JSON.stringify({ kind: 'tamper', n: 0 }) },
      ...Array.from({ length: RECORDS }, (_, n) => ({ topic: topic('ok'), partition: 0, value: JSON.stringify({ kind: 'ok', n }) })),
    ]);
    await writer.close();
  });

  afterAll(async () => {
    const admin = fixture?.kafka.admin();
    await admin?.deleteTopics(['looper', 'hog', 'bigmouth', 'tamperer', 'neighbour'].map((job) => `weir.${TENANT}.${job}.dead-letters`)).catch(() => undefined);
    await admin?.close();
    await fixture?.close();
  });

  it('fails the looping, the allocating and the oversized-output job with their reasons, and the neighbour runs on exactly', async () => {
    await start('neighbour', 'ok', 'out');
    await Promise.all([start('looper', 'loop', 'out'), start('hog', 'grow', 'out'), start('bigmouth', 'huge', 'tamper'), start('tamperer', 'tamper', 'tamper')]);

    const looper = await eventually('the looping job to fail', async () => (stateOf('looper')?.state === 'FAILED' ? stateOf('looper') : undefined));
    expect(looper!.failure).toMatch(/the job's code blocked its job host for \d+\.\d s without yielding \(an endless loop\?\), past the limit of 4 s/);
    const hog = await eventually('the allocating job to fail', async () => (stateOf('hog')?.state === 'FAILED' ? stateOf('hog') : undefined));
    expect(hog!.failure).toBe('the job ran out of memory: its job host reached its heap limit of 128 MiB (WEIR_JOB_HOST_MAX_HEAP_MB) and was stopped');
    const bigmouth = await eventually('the job with a huge output to fail', async () => (stateOf('bigmouth')?.state === 'FAILED' ? stateOf('bigmouth') : undefined));
    expect(bigmouth!.failure).toMatch(new RegExp(`a record for topic "${topic('tamper').replace(/\./g, '\\.')}" is \\d+ bytes, more than the 1048576 its sink takes`));

    // The worker and the neighbour were not touched (nor by the job that poisoned its built-ins): every record
    // once, in order, and the neighbour still RUNNING.
    const out = await readUntil(fixture.kafka, topic('out'), 1, (records) => records.length >= RECORDS, 1_000);
    expect(out.map((r) => parseJson<{ n: number }>(r).n)).toEqual(Array.from({ length: RECORDS }, (_, n) => n));
    expect(stateOf('neighbour')?.state).toBe('RUNNING');
  });
});

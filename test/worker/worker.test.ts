/**
 * The worker end to end against the real services: a bundle stored on S3 is dispatched over BullMQ, runs in a job
 * host child process, and moves records Kafka → keyed window → Kafka; bad bundles are refused without harm.
 */
import { randomBytes } from 'node:crypto';
import type { BlobStore } from '@weir/blob';
import type { WeirConfig } from '@weir/config';
import type { KafkaConnector } from '@weir/kafka';
import { CommandRejectedError, type CommandDispatcher, type RunSubtasks } from '@weir/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerApp } from '../../apps/worker/src/worker-app';
import { eventually } from '../control-plane/support/control-plane';
import { pollUntil } from '../kafka/support';
import { startWorkerFixture, type WorkerFixture } from './worker-fixture';

const run = randomBytes(4).toString('hex');
const TENANT = `t${run}`;
const IN = `t.${TENANT}.in`;
const OUT = `t.${TENANT}.out`;
const PARTITIONS = 2;

/** A job bundle source with this run's topics: counts words per key in 1 s event-time windows. */
const jobSource = `
import { aggregate, defineJob, json, kafkaSink, kafkaSource, tumbling } from '@weir/engine';
export default defineJob({ name: 'word-count', maxParallelism: 32 }, (job) => {
  job
    .source('words', kafkaSource<{ word: string; ts: number }>({
      topic: '${IN}', format: json(), timestamps: (w) => w.ts, watermarks: { maxOutOfOrdernessMs: 0 },
    }))
    .keyBy('by-word', (w) => w.word)
    .window('counts', tumbling(1000), aggregate<string, { word: string }, number, number, { word: string; start: number; n: number }>(
      { createAccumulator: () => 0, add: (_w, n) => n + 1, getResult: (n) => n },
      (word, w, n) => ({ word, start: w.start, n }),
    ))
    .sink('out', kafkaSink<{ word: string; start: number; n: number }>({ topic: '${OUT}', format: json() }));
});
`;

describe('worker', () => {
  let config: WeirConfig;
  let fixture: WorkerFixture;
  let app: WorkerApp;
  let kafka: KafkaConnector;
  let blobs: BlobStore;
  let dispatcher: CommandDispatcher;
  let bundle: { key: string; sha256: string };

  const command = (overrides: Partial<RunSubtasks> = {}): RunSubtasks => ({
    v: 1,
    type: 'run-subtasks',
    idempotencyKey: `run-${randomBytes(4).toString('hex')}`,
    issuedAt: Date.now(),
    tenantId: TENANT,
    jobId: 'word-count',
    bundle,
    maxParallelism: 32,
    subtasks: [
      { operatorId: 'words', subtask: 0, keyGroups: [] },
      { operatorId: 'words', subtask: 1, keyGroups: [] },
      { operatorId: 'counts', subtask: 0, keyGroups: [[0, 31]] },
    ],
    ...overrides,
  });

  beforeAll(async () => {
    fixture = await startWorkerFixture({ tenantId: TENANT, jobId: 'word-count', workerId: `test-worker-${run}`, jobSource, topics: [{ topic: IN, partitions: PARTITIONS }, { topic: OUT, partitions: 1 }] });
    ({ config, app, kafka, blobs, dispatcher, bundle } = fixture);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('refuses a bundle whose bytes do not match the recorded sha256, and runs nothing', async () => {
    const bad = command({ bundle: { key: bundle.key, sha256: 'f'.repeat(64) } });
    await expect(app.supervisor.run(bad)).rejects.toThrow(CommandRejectedError);
    await expect(app.supervisor.run(bad)).rejects.toThrow(/sha256/);
    expect(app.supervisor.runningSubtasks()).toEqual([]);
  });

  it('refuses a bundle that does not export a job, with the reason', async () => {
    const key = `tenants/${TENANT}/bundles/not-a-job.js`;
    const code = Buffer.from('module.exports = { hello: 1 };');
    const { createHash } = await import('node:crypto');
    await blobs.put(key, code);
    const sha256 = createHash('sha256').update(code).digest('hex');
    await expect(app.supervisor.run(command({ jobId: 'not-a-job', bundle: { key, sha256 } }))).rejects.toThrow(/must export a job definition/);
    await blobs.delete(key);
  });

  it('runs a dispatched bundle: records flow Kafka → keyed windows → Kafka, and stop ends it', async () => {
    const runCommand = command();
    await dispatcher.send(config.WEIR_WORKER_ID, runCommand);
    await eventually('the job to run', async () => {
      const running = app.supervisor.runningSubtasks();
      return running.length === 3 && running.every((s) => s.state === 'RUNNING') ? running : undefined;
    });
    // A repeated command (a retry, a second control plane) is applied once.
    await dispatcher.send(config.WEIR_WORKER_ID, runCommand);
    await app.supervisor.run(runCommand);

    const writer = kafka.writer({ writerId: `test-${run}` });
    await writer.start();
    const words = ['apple', 'pear', 'apple', 'fig', 'apple', 'pear'];
    await writer.send(words.map((word, i) => ({ topic: IN, partition: i % PARTITIONS, value: JSON.stringify({ word, ts: 1_000 + i }) })));
    // Past the window on every partition, so [1000, 2000) closes.
    await writer.send([0, 1].map((partition) => ({ topic: IN, partition, value: JSON.stringify({ word: 'zz-end', ts: 5_000 }) })));
    await writer.close();

    const reader = kafka.reader({ readerId: `test-out-${run}`, assignments: [{ topic: OUT, partition: 0, offset: 'earliest' }] });
    await reader.start();
    const out = (await pollUntil(reader, 3)).map((r) => JSON.parse(r.value!.toString()));
    await reader.close();
    expect(out.sort((a, b) => a.word.localeCompare(b.word))).toEqual([
      { word: 'apple', start: 1000, n: 3 },
      { word: 'fig', start: 1000, n: 1 },
      { word: 'pear', start: 1000, n: 2 },
    ]);
    await eventually('metrics from the job host', async () => (app.supervisor.metrics().some((m) => m.operatorId === 'counts' && m.recordsIn > 0) ? true : undefined));

    await dispatcher.send(config.WEIR_WORKER_ID, {
      v: 1, type: 'stop-subtasks', idempotencyKey: `stop-${run}`, issuedAt: Date.now(), tenantId: TENANT, jobId: 'word-count',
      subtasks: runCommand.subtasks.map(({ operatorId, subtask }) => ({ operatorId, subtask })), reason: 'test',
    });
    await eventually('the job to stop', async () => (app.supervisor.runningSubtasks().length === 0 ? true : undefined));
  });
});

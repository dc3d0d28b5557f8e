/**
 * Deployment-time parameters on a real worker: a parameterized bundle on S3, dispatched over BullMQ with a
 * run-subtasks `config`, reads and writes the topics that config names (Kafka → keyed windows → Kafka), with a
 * property; a config that lacks a topic is refused, naming it.
 */
import { randomBytes } from 'node:crypto';
import type { WeirConfig } from '@weir/config';
import type { KafkaConnector } from '@weir/kafka';
import { type CommandDispatcher, type RunSubtasks } from '@weir/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerApp } from '../../apps/worker/src/worker-app';
import { eventually } from '../control-plane/support/control-plane';
import { pollUntil } from '../kafka/support';
import { startWorkerFixture, type WorkerFixture } from '../worker/worker-fixture';

const run = randomBytes(4).toString('hex');
const TENANT = `t${run}`;
const IN = `t.${TENANT}.words`;
const OUT = `t.${TENANT}.counts`;

/** Word counts whose topics and window come from the deployment. */
const jobSource = `
import { aggregate, defineJob, json, kafkaSink, kafkaSource, param, tumbling } from '@weir/engine';
export default defineJob(
  { name: 'param-count', maxParallelism: 8, parameters: { topics: { words: param.topic(), counts: param.topic() }, properties: { 'window-ms': param.integer({ default: 1000, min: 1 }) } } },
  (job, { topics, properties }) => {
    job
      .source('words', kafkaSource<{ word: string; ts: number }>({ topic: topics.words, format: json(), timestamps: (w) => w.ts, watermarks: { maxOutOfOrdernessMs: 0 } }))
      .keyBy('by-word', (w) => w.word)
      .window('counts', tumbling(properties['window-ms']), aggregate<string, { word: string }, number, number, { word: string; start: number; n: number }>(
        { createAccumulator: () => 0, add: (_w, n) => n + 1, getResult: (n) => n },
        (word, w, n) => ({ word, start: w.start, n }),
      ))
      .sink('out', kafkaSink<{ word: string; start: number; n: number }>({ topic: topics.counts, format: json() }));
  },
);
`;

describe('a parameterized bundle on a worker', () => {
  let config: WeirConfig;
  let fixture: WorkerFixture;
  let app: WorkerApp;
  let kafka: KafkaConnector;
  let dispatcher: CommandDispatcher;
  let bundle: { key: string; sha256: string };

  const command = (jobConfig: RunSubtasks['config']): RunSubtasks => ({
    v: 1,
    type: 'run-subtasks',
    idempotencyKey: `run-${randomBytes(4).toString('hex')}`,
    issuedAt: Date.now(),
    tenantId: TENANT,
    jobId: 'param-count',
    bundle,
    maxParallelism: 8,
    subtasks: [
      { operatorId: 'words', subtask: 0, keyGroups: [] },
      { operatorId: 'counts', subtask: 0, keyGroups: [[0, 7]] },
    ],
    config: jobConfig,
  });

  beforeAll(async () => {
    fixture = await startWorkerFixture({ tenantId: TENANT, jobId: 'param-count', workerId: `param-worker-${run}`, jobSource, topics: [{ topic: IN, partitions: 1 }, { topic: OUT, partitions: 1 }] });
    ({ config, app, kafka, dispatcher, bundle } = fixture);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('refuses a config without a topic the job needs, naming it', async () => {
    await expect(app.supervisor.run(command({ topics: { words: IN } }))).rejects.toThrow(/config\.topics\.counts: is missing/);
    expect(app.supervisor.runningSubtasks()).toEqual([]);
  });

  it('runs with the topics and the window its config names', async () => {
    const runCommand = command({ topics: { words: IN, counts: OUT }, properties: { 'window-ms': '2000' } });
    await dispatcher.send(config.WEIR_WORKER_ID, runCommand);
    await eventually('the job to run', async () => {
      const running = app.supervisor.runningSubtasks();
      return running.length === 2 && running.every((s) => s.state === 'RUNNING') ? running : undefined;
    });
    const writer = kafka.writer({ writerId: `param-${run}` });
    await writer.start();
    // 2 s windows: 1000 and 1999 fall in [0, 2000), 2500 in [2000, 4000); the last record closes both.
    await writer.send([1_000, 1_999, 2_500].map((ts) => ({ topic: IN, value: JSON.stringify({ word: 'fig', ts }) })));
    await writer.send([{ topic: IN, value: JSON.stringify({ word: 'zz-end', ts: 9_000 }) }]);
    await writer.close();
    const reader = kafka.reader({ readerId: `param-out-${run}`, assignments: [{ topic: OUT, partition: 0, offset: 'earliest' }] });
    await reader.start();
    const out = (await pollUntil(reader, 2)).map((r) => JSON.parse(r.value!.toString()));
    await reader.close();
    expect(out).toEqual([
      { word: 'fig', start: 0, n: 2 },
      { word: 'fig', start: 2000, n: 1 },
    ]);
    await dispatcher.send(config.WEIR_WORKER_ID, {
      v: 1, type: 'stop-subtasks', idempotencyKey: `stop-${run}`, issuedAt: Date.now(), tenantId: TENANT, jobId: 'param-count',
      subtasks: runCommand.subtasks.map(({ operatorId, subtask }) => ({ operatorId, subtask })), reason: 'test',
    });
    await eventually('the job to stop', async () => (app.supervisor.runningSubtasks().length === 0 ? true : undefined));
  });
});

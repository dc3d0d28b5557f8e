/**
 * A Kafka source subtask's snapshot carries its backlog (records behind the log end over the partitions it reads),
 * what the autoscaler drains: above 0 while a slow keyed step holds the source back, 0 once it read to the end, and
 * null on every subtask that is not a Kafka source.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaConnector, type KafkaAdmin, type KafkaConnector } from '@weir/kafka';
import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import { createStateBackend } from '@weir/state';
import { aggregate, callbackSink, defineJob, json, kafkaSource, runJob, tumbling } from '@weir/engine';
import { eventually } from '../control-plane/support/control-plane';

const BROKERS = (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const suffix = randomBytes(4).toString('hex');
const topic = `test.engine.backlog.${suffix}`;
const RECORDS = 2_000;

/** Half a millisecond of CPU per record: the keyed step is the job's bottleneck, so the source falls behind. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const job = defineJob({ name: 'slow-count', maxParallelism: 8 }, (b) =>
  b
    .source<{ k: string; ts: number }>('tx', kafkaSource({ topic, format: json<{ k: string; ts: number }>(), timestamps: (t) => t.ts, watermarks: { maxOutOfOrdernessMs: 0 } }))
    .keyBy('by-key', (t) => t.k)
    .window(
      'count',
      tumbling(60_000),
      aggregate<string, { k: string; ts: number }, number, number>({
        createAccumulator: () => 0,
        add: (_, a) => {
          spin(0.5);
          return a + 1;
        },
        getResult: (a) => a,
      }),
    )
    .sink('out', callbackSink(() => undefined)),
);

describe('a Kafka source subtask’s backlog in its metrics snapshot', () => {
  let connector: KafkaConnector;
  let admin: KafkaAdmin;

  beforeAll(async () => {
    connector = createKafkaConnector({ brokers: BROKERS, clientId: 'weir-backlog-test' });
    admin = connector.admin();
    await admin.ensureTopics([{ topic, partitions: 2 }]);
    const writer = connector.writer({ writerId: `backlog-test-${suffix}` });
    await writer.start();
    await writer.send(Array.from({ length: RECORDS }, (_, i) => ({ topic, partition: i % 2, value: JSON.stringify({ k: `k${i % 50}`, ts: i }) })));
    await writer.close();
  });

  afterAll(async () => {
    await admin.deleteTopics([topic]);
    await admin.close();
  });

  it('is above 0 while the source is held back, 0 once it read to the end, null for other subtasks', async () => {
    const running = await runJob(job, {
      tenantId: 't1',
      jobId: `backlog-${suffix}`,
      parallelism: { default: 1 },
      kafka: connector,
      queueCapacity: 64,
      state: () => createStateBackend({ kind: 'memory' }),
    });
    const sourcesOf = (snapshots: SubtaskMetricsSnapshot[]) => snapshots.filter((s) => s.operatorId === 'tx');
    try {
      const behind = await eventually(
        'a backlog while the keyed step is slow',
        async () => {
          const snapshots = running.metrics();
          const backlog = sourcesOf(snapshots)[0]?.sourceBacklog ?? null;
          return backlog !== null && backlog > 0 ? snapshots : undefined;
        },
        { timeoutMs: 30_000, everyMs: 20 },
      );
      const backlog = sourcesOf(behind)[0].sourceBacklog!;
      expect(backlog).toBeLessThanOrEqual(RECORDS);
      expect(behind.filter((s) => s.operatorId !== 'tx').every((s) => s.sourceBacklog === null)).toBe(true);

      // Read to the end: every partition's position at its log end, and nothing behind.
      await eventually(
        'the source at the log end',
        async () => {
          const positions = Object.assign({}, ...running.sourcePositions().tx) as Record<string, string>;
          return Object.values(positions).reduce((n, p) => n + Number(p), 0) >= RECORDS ? true : undefined;
        },
        { timeoutMs: 60_000, everyMs: 50 },
      );
      const caughtUp = await eventually(
        'no backlog',
        async () => {
          const snapshots = running.metrics();
          return sourcesOf(snapshots)[0]?.sourceBacklog === 0 ? snapshots : undefined;
        },
        { timeoutMs: 10_000, everyMs: 50 },
      );
      expect(caughtUp.filter((s) => s.operatorId !== 'tx').every((s) => s.sourceBacklog === null)).toBe(true);
    } finally {
      await running.stop();
    }
  });
});

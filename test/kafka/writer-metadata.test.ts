/**
 * A long-lived writer outlives the deletion of a topic it once wrote to: kafkajs would keep asking for that topic on
 * every metadata refresh and fail every later send, to any topic (tulios/kafkajs#1622).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaConnector, KafkaWriter } from '@weir/kafka';
import { pollUntil, testConnector, uniqueTopic } from './support';

describe('Kafka writer after topic deletion', () => {
  let connector: KafkaConnector;
  let admin: KafkaAdmin;
  let writer: KafkaWriter;
  let quick: KafkaWriter;
  const doomed = uniqueTopic('doomed');
  const kept = uniqueTopic('kept');
  const later = uniqueTopic('later');

  beforeAll(async () => {
    connector = testConnector();
    admin = connector.admin();
    await admin.ensureTopics([doomed, kept, later].map((topic) => ({ topic, partitions: 2 })));
    writer = connector.writer({ writerId: 'metadata-test' });
    quick = connector.writer({ writerId: 'metadata-test-quick', failFast: true });
    await Promise.all([writer.start(), quick.start()]);
  });

  afterAll(async () => {
    await Promise.allSettled([writer?.close(), quick?.close()]);
    await admin?.deleteTopics([doomed, kept, later]).catch(() => undefined);
    await admin?.close();
  });

  it('keeps sending to other topics, known and new, after one it wrote to is deleted; the deleted one fails typed', async () => {
    await writer.send([{ topic: doomed, key: 'a', value: 'before' }, { topic: kept, key: 'a', value: 'k1' }]);
    await quick.send([{ topic: doomed, key: 'a', value: 'before' }]);
    await admin.deleteTopics([doomed]);

    // A topic the writer never wrote to needs a metadata refresh, which named the deleted topic too.
    await writer.send([{ topic: later, key: 'b', value: 'l1' }]);
    await writer.send([{ topic: kept, key: 'b', value: 'k2' }]);
    const started = Date.now();
    await quick.send([{ topic: later, key: 'q', value: 'l2' }]);
    // kafkajs retries the failed refresh for ~3 s before the writer may replace its producer.
    expect(Date.now() - started).toBeLessThan(8_000);

    await expect(writer.send([{ topic: doomed, key: 'c', value: 'after' }])).rejects.toMatchObject({ name: expect.stringMatching(/^(TopicNotFoundError|KafkaError)$/) });

    const reader = connector.reader({
      readerId: 'metadata-test-check',
      assignments: [kept, later].flatMap((topic) => [0, 1].map((partition) => ({ topic, partition, offset: 'earliest' as const }))),
    });
    await reader.start();
    const read = await pollUntil(reader, 4, 3_000);
    await reader.close();
    // Each record once: the retry resends only what the broker had not acknowledged.
    expect(read.map((r) => `${r.topic === kept ? 'kept' : 'later'}:${r.value?.toString()}`).sort()).toEqual(['kept:k1', 'kept:k2', 'later:l1', 'later:l2']);
  });
});

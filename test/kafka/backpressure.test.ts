import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaConnector } from '@weir/kafka';
import { testConnector, uniqueTopic } from './support';

describe('Kafka reader backpressure', () => {
  const topic = uniqueTopic('backpressure');
  // ~10 MiB in one partition: several fetches, so reading everything needs fetching to resume after each pause.
  const count = 2500;
  const value = Buffer.alloc(4096, 7);
  let connector: KafkaConnector;
  let admin: KafkaAdmin;

  beforeAll(async () => {
    connector = testConnector();
    admin = connector.admin();
    await admin.ensureTopics([{ topic, partitions: 1 }]);
    const writer = connector.writer({ writerId: 'bp-writer' });
    await writer.start();
    for (let i = 0; i < count; i += 250) {
      await writer.send(Array.from({ length: 250 }, (_, j) => ({ topic, partition: 0, key: String(i + j), value })));
    }
    await writer.close();
  });

  afterAll(async () => {
    await admin.deleteTopics([topic]);
    await admin.close();
  });

  it('pauses on a full buffer and still delivers every record once, in order', async () => {
    const reader = connector.reader({
      readerId: 'bp-reader',
      maxBufferedRecords: 100,
      assignments: [{ topic, partition: 0, offset: 'earliest' }],
    });
    await reader.start();
    const keys: number[] = [];
    let lagSeenWhileBehind = 0;
    while (keys.length < count) {
      const batch = await reader.poll(37, 5_000);
      if (batch.length === 0) break;
      for (const r of batch) keys.push(Number(r.key?.toString()));
      lagSeenWhileBehind = Math.max(lagSeenWhileBehind, reader.lag().get(`${topic}:0`) ?? 0);
      // A slow consumer: the buffer stays full between polls.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await reader.close();
    expect(keys).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(lagSeenWhileBehind).toBeGreaterThan(0);
  });
});

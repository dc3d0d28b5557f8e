import { describe, expect, it } from 'vitest';
import { filledTopic, numberedRecords, pollFor, pollUntil, uniqueTopic, valuesByPartition } from './support';

describe('Kafka reader and writer', () => {
  const partitions = 3;
  const total = 3000;
  const kafka = filledTopic('rw', partitions, (topic) => [
    ...numberedRecords(topic, total, partitions),
    { topic, partition: 0, key: 'with-headers', value: 'h', timestamp: 1_700_000_000_000, headers: { trace: Buffer.from('t-1') } },
  ]);
  const { topic } = kafka;

  it('reads every record exactly once, in order per partition, from earliest', async () => {
    const reader = kafka.connector.reader({
      readerId: 'rw-all',
      assignments: Array.from({ length: partitions }, (_, p) => ({ topic, partition: p, offset: 'earliest' })),
    });
    await reader.start();
    const records = await pollUntil(reader, total + 1);
    const extra = await pollFor(reader, 300);
    await reader.close();

    expect(records).toHaveLength(total + 1);
    expect(extra).toHaveLength(0);
    const byPartition = valuesByPartition(records);
    for (let p = 0; p < partitions; p++) {
      const expected = numberedRecords(topic, total, partitions)
        .filter((r) => r.partition === p)
        .map((r) => String(r.value));
      if (p === 0) expected.push('h');
      expect(byPartition.get(p)).toEqual(expected);
    }
    const offsetsOf0 = records.filter((r) => r.partition === 0).map((r) => Number(r.offset));
    expect(offsetsOf0).toEqual(offsetsOf0.map((_, i) => i));
    const withHeaders = records.find((r) => r.key?.toString() === 'with-headers');
    expect(withHeaders?.headers.trace?.toString()).toBe('t-1');
    expect(withHeaders?.timestamp).toBe(1_700_000_000_000);
  });

  it('reports positions after what poll returned and zero lag once drained', async () => {
    const reader = kafka.connector.reader({ readerId: 'rw-pos', assignments: [{ topic, partition: 1, offset: 'earliest' }] });
    await reader.start();
    expect(reader.positions().get(`${topic}:1`)).toBe('0');
    expect(reader.lag().get(`${topic}:1`)).toBe(total / partitions);

    const first = await reader.poll(10, 5_000);
    expect(first.length).toBeGreaterThan(0);
    expect(reader.positions().get(`${topic}:1`)).toBe(String(Number(first[first.length - 1].offset) + 1));

    await pollUntil(reader, total / partitions - first.length);
    expect(reader.positions().get(`${topic}:1`)).toBe(String(total / partitions));
    expect(reader.lag().get(`${topic}:1`)).toBe(0);
    await reader.close();
  });

  it('starts at a given offset and at latest', async () => {
    const reader = kafka.connector.reader({
      readerId: 'rw-offset',
      assignments: [
        { topic, partition: 2, offset: '990' },
        { topic, partition: 1, offset: 'latest' },
      ],
    });
    await reader.start();
    expect(reader.positions().get(`${topic}:1`)).toBe(String(total / partitions));
    const records = await pollUntil(reader, 10);
    const extra = await pollFor(reader, 300);
    await reader.close();

    expect(extra).toHaveLength(0);
    expect(records.map((r) => r.partition)).toEqual(Array(10).fill(2));
    expect(records.map((r) => r.offset)).toEqual(Array.from({ length: 10 }, (_, i) => String(990 + i)));
  });

  it('reads only the assigned subset of partitions', async () => {
    const reader = kafka.connector.reader({
      readerId: 'rw-subset',
      assignments: [
        { topic, partition: 0, offset: 'earliest' },
        { topic, partition: 2, offset: 'earliest' },
      ],
    });
    await reader.start();
    const records = await pollUntil(reader, (2 * total) / partitions + 1);
    const extra = await pollFor(reader, 300);
    await reader.close();

    expect(extra).toHaveLength(0);
    expect(new Set(records.map((r) => r.partition))).toEqual(new Set([0, 2]));
    expect(records).toHaveLength((2 * total) / partitions + 1);
  });

  it('delivers everything through a small buffer (backpressure pauses and resumes fetching)', async () => {
    const reader = kafka.connector.reader({
      readerId: 'rw-small',
      maxBufferedRecords: 50,
      assignments: Array.from({ length: partitions }, (_, p) => ({ topic, partition: p, offset: 'earliest' })),
    });
    await reader.start();
    const records: string[] = [];
    while (records.length < total + 1) {
      const batch = await reader.poll(7, 5_000);
      if (batch.length === 0) break;
      for (const r of batch) records.push(`${r.partition}:${r.offset}`);
      // A slow consumer: the buffer fills up between polls, so fetching must pause.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await reader.close();
    expect(records).toHaveLength(total + 1);
    expect(new Set(records).size).toBe(total + 1);
  });

  it('sends a batch larger than the broker accepts in one request (split under message.max.bytes)', async () => {
    const big = uniqueTopic('big');
    await kafka.admin.ensureTopics([{ topic: big, partitions: 1 }]);
    try {
      const writer = kafka.connector.writer({ writerId: 'rw-big' });
      await writer.start();
      const value = Buffer.alloc(1024, 1);
      await writer.send(Array.from({ length: 3000 }, (_, i) => ({ topic: big, key: String(i), value })));
      await writer.close();
      expect(await kafka.admin.offsets(big)).toEqual([{ partition: 0, earliest: '0', latest: '3000' }]);
    } finally {
      await kafka.admin.deleteTopics([big]);
    }
  });

  it('rejects partitions that do not exist', async () => {
    const reader = kafka.connector.reader({ readerId: 'rw-bad', assignments: [{ topic, partition: 7, offset: 'earliest' }] });
    await expect(reader.start()).rejects.toMatchObject({ name: 'TopicConfigError' });
    await reader.close();
  });
});

import { describe, expect, it } from 'vitest';
import type { ConsumedRecord } from '@weir/kafka';
import { filledTopic, numberedRecords, pollFor, pollUntil } from './support';

const offsetsOf = (records: readonly ConsumedRecord[], partition: number): number[] =>
  records.filter((r) => r.partition === partition).map((r) => Number(r.offset));
const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

describe('Kafka reader reassignment', () => {
  const partitions = 4;
  const perPartition = 1000;
  const kafka = filledTopic('reassign', partitions, (topic) => numberedRecords(topic, partitions * perPartition, partitions));
  const { topic } = kafka;

  it('moves partitions in and out without losing or repeating records relative to positions', async () => {
    const reader = kafka.connector.reader({
      readerId: 'reassign-moves',
      maxBufferedRecords: 300,
      assignments: [
        { topic, partition: 0, offset: 'earliest' },
        { topic, partition: 1, offset: 'earliest' },
      ],
    });
    await reader.start();
    // Read part of the input, leaving records buffered but not polled.
    const before: ConsumedRecord[] = [];
    while (before.length < 700) before.push(...(await reader.poll(100, 5_000)));
    const positions = reader.positions();
    const keep0 = positions.get(`${topic}:0`)!;

    await reader.reassign([
      { topic, partition: 0, offset: keep0 },
      { topic, partition: 2, offset: 'earliest' },
      { topic, partition: 3, offset: '400' },
    ]);
    expect([...reader.positions().keys()].sort()).toEqual([`${topic}:0`, `${topic}:2`, `${topic}:3`]);

    const expectedAfter = perPartition - Number(keep0) + perPartition + (perPartition - 400);
    const after = await pollUntil(reader, expectedAfter);
    const extra = await pollFor(reader, 300);
    await reader.close();

    expect(extra).toHaveLength(0);
    expect(offsetsOf(after, 1)).toEqual([]);
    expect([...offsetsOf(before, 0), ...offsetsOf(after, 0)]).toEqual(range(0, perPartition));
    expect(offsetsOf(after, 2)).toEqual(range(0, perPartition));
    expect(offsetsOf(after, 3)).toEqual(range(400, perPartition));
    expect(offsetsOf(before, 1)).toEqual(range(0, Number(positions.get(`${topic}:1`))));
  });

  it('restores a checkpointed position: re-reads exactly what followed it', async () => {
    const reader = kafka.connector.reader({ readerId: 'reassign-restore', assignments: [{ topic, partition: 2, offset: 'earliest' }] });
    await reader.start();
    const first = await pollUntil(reader, 250);
    const checkpoint = reader.positions().get(`${topic}:2`)!;
    expect(checkpoint).toBe(String(Number(first[first.length - 1].offset) + 1));
    await pollUntil(reader, 300); // progress past the checkpoint, then "fail" and restore

    await reader.reassign([{ topic, partition: 2, offset: checkpoint }]);
    const replay = await pollUntil(reader, perPartition - Number(checkpoint));
    await reader.close();
    expect(offsetsOf(replay, 2)).toEqual(range(Number(checkpoint), perPartition));
  });

  it('can hold no partitions for a while and pick one up again', async () => {
    const reader = kafka.connector.reader({ readerId: 'reassign-empty', assignments: [{ topic, partition: 3, offset: '995' }] });
    await reader.start();
    await reader.reassign([]);
    expect(reader.positions().size).toBe(0);
    expect(await reader.poll(100, 200)).toEqual([]);
    await reader.reassign([{ topic, partition: 3, offset: '995' }]);
    const records = await pollUntil(reader, 5);
    await reader.close();
    expect(offsetsOf(records, 3)).toEqual(range(995, 1000));
  });

  it('keeps a bad reassignment from disturbing the current one', async () => {
    const reader = kafka.connector.reader({ readerId: 'reassign-bad', assignments: [{ topic, partition: 1, offset: '990' }] });
    await reader.start();
    await expect(reader.reassign([{ topic, partition: 99, offset: 'earliest' }])).rejects.toMatchObject({
      name: 'TopicConfigError',
    });
    const records = await pollUntil(reader, 10);
    await reader.close();
    expect(offsetsOf(records, 1)).toEqual(range(990, 1000));
  });
});

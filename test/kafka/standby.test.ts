import { describe, expect, it } from 'vitest';
import type { ConsumedRecord } from '@weir/kafka';
import { filledTopic, numberedRecords, pollFor, pollUntil } from './support';

const offsetsOf = (records: readonly ConsumedRecord[], partition: number): number[] =>
  records.filter((r) => r.partition === partition).map((r) => Number(r.offset));
const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

describe('Kafka reader standby partitions (activate / deactivate without a consumer swap)', () => {
  const partitions = 4;
  const perPartition = 1000;
  const kafka = filledTopic('standby', partitions, (topic) => numberedRecords(topic, partitions * perPartition, partitions));
  const { topic } = kafka;

  it('reads nothing of a standby partition until activated, then exactly from the offset given', async () => {
    const reader = kafka.connector.reader({
      readerId: 'standby-activate',
      maxBufferedRecords: 300,
      assignments: [{ topic, partition: 0, offset: 'earliest' }],
      standby: [1, 2, 3].map((partition) => ({ topic, partition })),
    });
    await reader.start();
    const first = await pollUntil(reader, perPartition);
    expect(offsetsOf(first, 0)).toEqual(range(0, perPartition));
    expect(await pollFor(reader, 300)).toEqual([]);

    await reader.activate(topic, 2, '600');
    await reader.activate(topic, 3, 'earliest');
    const after = await pollUntil(reader, perPartition - 600 + perPartition);
    expect(offsetsOf(after, 2)).toEqual(range(600, perPartition));
    expect(offsetsOf(after, 3)).toEqual(range(0, perPartition));
    expect(offsetsOf(after, 1)).toEqual([]);
    expect(await pollFor(reader, 300)).toEqual([]);
    await reader.close();
  });

  it('drops a deactivated partition at once (buffered records too) and re-reads it from where it is activated again', async () => {
    const reader = kafka.connector.reader({
      readerId: 'standby-deactivate',
      maxBufferedRecords: 200,
      assignments: [
        { topic, partition: 1, offset: 'earliest' },
        { topic, partition: 2, offset: 'earliest' },
      ],
      standby: [0, 3].map((partition) => ({ topic, partition })),
    });
    await reader.start();
    const before = await pollUntil(reader, 300);
    const handed = offsetsOf(before, 1);
    reader.deactivate(topic, 1);
    expect(reader.positions().has(`${topic}:1`)).toBe(false);
    // Whatever it had buffered of partition 1 never comes; partition 2 goes on.
    const rest = await pollUntil(reader, perPartition - offsetsOf(before, 2).length);
    expect(offsetsOf(rest, 1)).toEqual([]);
    expect([...offsetsOf(before, 2), ...offsetsOf(rest, 2)]).toEqual(range(0, perPartition));

    // Activated again at the offset after the last record handed on: nothing lost, nothing twice.
    const resumeAt = handed.length === 0 ? 0 : handed[handed.length - 1] + 1;
    await reader.activate(topic, 1, String(resumeAt));
    const again = await pollUntil(reader, perPartition - resumeAt);
    expect([...handed, ...offsetsOf(again, 1)]).toEqual(range(0, perPartition));
    expect(await pollFor(reader, 300)).toEqual([]);
    await reader.close();
  });

  it('refuses to activate a partition that is not standby, saying which', async () => {
    const reader = kafka.connector.reader({ readerId: 'standby-refuse', assignments: [{ topic, partition: 0, offset: 'earliest' }] });
    await reader.start();
    await expect(reader.activate(topic, 1, 'earliest')).rejects.toThrow(/not a standby partition/);
    await reader.close();
  });
});

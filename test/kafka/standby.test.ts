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

describe('a standby partition of a transactional topic, activated at a transaction marker', () => {
  const kafka = filledTopic('standby-markers', 1, () => []);

  it('reads the records after the marker (the first delivered lies above the position: it is not a stale fetch)', async () => {
    const { topic, connector } = kafka;
    const writer = connector.writer({ writerId: 'standby-markers-writer', transactionalId: `standby-markers-${topic}` });
    await writer.start();
    // Two transactions of two records each: offsets 0, 1 and the commit marker at 2; then 3, 4 and the marker at 5.
    for (const values of [['a', 'b'], ['c', 'd']]) {
      const tx = await writer.transaction();
      await tx.send(values.map((value) => ({ topic, partition: 0, value })));
      await tx.commit();
    }
    await writer.close();
    const reader = connector.reader({ readerId: 'standby-markers', assignments: [], standby: [{ topic, partition: 0 }] });
    await reader.start();
    // Where a reader that has read the first transaction stands: on its commit marker.
    await reader.activate(topic, 0, '2');
    const records = await pollUntil(reader, 2);
    expect(records.map((r) => [Number(r.offset), r.value!.toString()])).toEqual([
      [3, 'c'],
      [4, 'd'],
    ]);
    await reader.close();
  });
});

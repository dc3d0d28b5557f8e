import { type ICustomPartitioner, Partitioners, type Message } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { withLinearGrouping } from './linear-grouping';
import { javaCompatiblePartitioner } from './partitioner';

// kafkajs's own grouping, the behaviour withLinearGrouping must keep (kafkajs 2.2.4, pinned).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const groupMessagesPerPartition = require('kafkajs/src/producer/groupMessagesPerPartition') as (args: {
  topic: string;
  partitionMetadata: { partitionId: number; leader: number }[];
  messages: Message[];
  partitioner: ReturnType<ICustomPartitioner>;
}) => Record<string, Message[]>;

const partitionMetadata = Array.from({ length: 6 }, (_, partitionId) => ({ partitionId, leader: 1 }));

function messages(keyless = false): Message[] {
  return Array.from({ length: 500 }, (_, i) => ({
    key: keyless && i % 3 === 0 ? null : i % 2 === 1 ? `key-${i % 37}` : Buffer.from(`b${i % 11}`),
    value: `v${i}`,
    partition: i % 17 === 0 ? i % 6 : undefined,
  }));
}

describe('withLinearGrouping', () => {
  it('groups exactly as kafkajs does: keyed records and explicit partitions, in order', () => {
    const expected = groupMessagesPerPartition({ topic: 't', partitionMetadata, messages: messages(), partitioner: Partitioners.DefaultPartitioner() });
    const actual = groupMessagesPerPartition({
      topic: 't',
      partitionMetadata,
      messages: withLinearGrouping(messages()),
      partitioner: Partitioners.DefaultPartitioner(),
    });
    expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
    for (const partition of Object.keys(expected)) {
      expect(actual[partition].map((m) => m.value)).toEqual(expected[partition].map((m) => m.value));
    }
  });

  it('sends keyless records round-robin (from a random start, as kafkajs does), none lost, order kept', () => {
    const grouped = groupMessagesPerPartition({
      topic: 't',
      partitionMetadata,
      messages: withLinearGrouping(messages(true)),
      partitioner: Partitioners.DefaultPartitioner(),
    });
    const all = Object.values(grouped).flat();
    expect(all).toHaveLength(500);
    for (const list of Object.values(grouped)) {
      const order = list.map((m) => Number(String(m.value).slice(1)));
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
    expect(Object.keys(grouped)).toHaveLength(6);
  });

  it('with Weir’s partitioner, places byte-keyed and explicit-partition records itself exactly where it would', () => {
    const all = messages(true);
    const expected = groupMessagesPerPartition({ topic: 't', partitionMetadata, messages: all.filter((m) => m.key !== null), partitioner: javaCompatiblePartitioner() });
    const actual = groupMessagesPerPartition({ topic: 't', partitionMetadata, messages: withLinearGrouping(all), partitioner: javaCompatiblePartitioner() });
    expect(Object.values(actual).flat()).toHaveLength(500);
    for (const partition of Object.keys(expected)) {
      // Keyless records (round-robin) are interleaved; the keyed ones keep kafkajs's placement and order.
      expect(actual[partition].filter((m) => m.key !== null).map((m) => m.value)).toEqual(expected[partition].map((m) => m.value));
    }
  });

  it('leaves every other use of reduce alone', () => {
    const list = withLinearGrouping(messages().slice(0, 4));
    expect(list.reduce((n, m) => n + String(m.value).length, 0)).toBe(8);
    expect(list.reduce((acc: string[], m) => [...acc, String(m.value)], [])).toEqual(['v0', 'v1', 'v2', 'v3']);
    expect(Object.keys(list)).toEqual(['0', '1', '2', '3']);
  });
});

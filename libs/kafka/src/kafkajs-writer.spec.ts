import { describe, expect, it } from 'vitest';
import { splitBySize, toTopicMessages } from './kafkajs-writer';

describe('toTopicMessages', () => {
  it('groups records by topic, keeping their order within each topic', () => {
    const grouped = toTopicMessages([
      { topic: 'a', value: '1', key: 'k' },
      { topic: 'a', value: '2', partition: 3 },
      { topic: 'b', value: '3', timestamp: 42, headers: { h: Buffer.from('x') } },
      { topic: 'a', value: '4' },
    ]);
    expect(grouped.map((g) => [g.topic, g.messages.map((m) => m.value)])).toEqual([
      ['a', ['1', '2', '4']],
      ['b', ['3']],
    ]);
    expect(grouped[0].messages[1].partition).toBe(3);
    expect(grouped[1].messages[0].timestamp).toBe(42);
    expect(grouped[0].messages[0].key).toEqual(Buffer.from('k'));
  });

  it('hands a record whose key is bytes (or absent) to kafkajs as it is', () => {
    const record = { topic: 'a', key: Buffer.from('k'), value: '1', timestamp: 7 };
    expect(toTopicMessages([record])[0].messages[0]).toBe(record);
  });
});

describe('splitBySize', () => {
  const records = (count: number, valueBytes: number) =>
    Array.from({ length: count }, (_, i) => ({ topic: 't', key: `k${i}`, value: Buffer.alloc(valueBytes) }));

  it('keeps a small send whole', () => {
    const small = records(10, 100);
    expect(splitBySize(small, 768 * 1024)).toEqual([small]);
  });

  it('cuts a big send into in-order requests under the limit', () => {
    const big = records(3000, 1000);
    const chunks = splitBySize(big, 768 * 1024);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.flat()).toEqual(big);
    for (const chunk of chunks) expect(chunk.length * 1000).toBeLessThan(768 * 1024);
  });

  it('lets a single record over the limit through alone (the broker then names the problem)', () => {
    const huge = records(3, 2_000_000);
    expect(splitBySize(huge, 768 * 1024).map((c) => c.length)).toEqual([1, 1, 1]);
  });
});

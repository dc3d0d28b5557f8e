import { describe, expect, it } from 'vitest';
import { toTopicMessages } from './kafkajs-writer';

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
    expect(grouped[1].messages[0].timestamp).toBe('42');
    expect(grouped[0].messages[0].key).toBe('k');
  });
});

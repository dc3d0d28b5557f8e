import { describe, expect, it } from 'vitest';
import type { ConsumedRecord } from './contract';
import { nextOffset, partitionKey, RecordBuffer } from './record-buffer';

const rec = (partition: number, offset: number): ConsumedRecord => ({
  topic: 't',
  partition,
  offset: String(offset),
  key: null,
  value: null,
  timestamp: 0,
  headers: {},
});
const offsets = (records: readonly ConsumedRecord[]) => records.map((r) => `${r.partition}:${r.offset}`);

describe('RecordBuffer', () => {
  it('hands out records in fetch order across batches, never more than asked', () => {
    const buffer = new RecordBuffer();
    buffer.reset(new Map([['t:0', '0'], ['t:1', '5']]));
    buffer.push('t:0', [rec(0, 0), rec(0, 1), rec(0, 2)], '3');
    buffer.push('t:1', [rec(1, 5), rec(1, 6)], '7');
    expect(buffer.size).toBe(5);
    expect(offsets(buffer.take(2))).toEqual(['0:0', '0:1']);
    expect(offsets(buffer.take(10))).toEqual(['0:2', '1:5', '1:6']);
    expect(buffer.size).toBe(0);
    expect(buffer.take(10)).toEqual([]);
  });

  it('positions follow what was taken, and a finished batch moves past its trailing markers', () => {
    const buffer = new RecordBuffer();
    buffer.reset(new Map([['t:0', '10']]));
    // Records 10 and 11, then a commit marker at 12: the batch ends at 13.
    buffer.push('t:0', [rec(0, 10), rec(0, 11)], '13');
    expect(buffer.positions().get('t:0')).toBe('10');
    buffer.take(1);
    expect(buffer.positions().get('t:0')).toBe('11');
    buffer.take(1);
    expect(buffer.positions().get('t:0')).toBe('13');
  });

  it('applies a records-free batch (only markers) at once when nothing is buffered, else in order', () => {
    const buffer = new RecordBuffer();
    buffer.reset(new Map([['t:0', '0'], ['t:1', '0']]));
    buffer.push('t:1', [], '4');
    expect(buffer.positions().get('t:1')).toBe('4');

    buffer.push('t:0', [rec(0, 0)], '1');
    buffer.push('t:0', [], '3');
    expect(buffer.positions().get('t:0')).toBe('0');
    buffer.take(1);
    expect(buffer.positions().get('t:0')).toBe('1');
    buffer.take(1);
    expect(buffer.positions().get('t:0')).toBe('3');
  });

  it('reset drops buffered records and replaces the partitions', () => {
    const buffer = new RecordBuffer();
    buffer.reset(new Map([['t:0', '0']]));
    buffer.push('t:0', [rec(0, 0)], '1');
    buffer.reset(new Map([['t:2', '7']]));
    expect(buffer.size).toBe(0);
    expect(buffer.take(5)).toEqual([]);
    expect([...buffer.positions()]).toEqual([['t:2', '7']]);
  });

  it('stays correct across many batches (internal compaction)', () => {
    const buffer = new RecordBuffer();
    buffer.reset(new Map([['t:0', '0']]));
    let taken = 0;
    for (let i = 0; i < 5000; i++) {
      buffer.push('t:0', [rec(0, i)], String(i + 1));
      if (i % 3 === 0) taken += buffer.take(2).length;
    }
    taken += buffer.take(10_000).length;
    expect(taken).toBe(5000);
    expect(buffer.positions().get('t:0')).toBe('5000');
  });
});

describe('offset helpers', () => {
  it('adds one to int64 offsets beyond 2^53', () => {
    expect(nextOffset('9007199254740993')).toBe('9007199254740994');
    expect(partitionKey('orders', 3)).toBe('orders:3');
  });
});

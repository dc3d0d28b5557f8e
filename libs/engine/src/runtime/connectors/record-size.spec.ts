import { describe, expect, it } from 'vitest';
import { json } from '../../sdk/serde';
import { checkRecordSize, SinkRecordTooLargeError } from './record-size';

describe('checkRecordSize', () => {
  const spec = { kind: 'kafka' as const, topic: 't.a.out', format: json() };

  it("refuses a record past Kafka's default, naming the topic, its size and the limit", () => {
    const value = Buffer.alloc(1_048_577);
    expect(() => checkRecordSize(spec, null, value)).toThrow(SinkRecordTooLargeError);
    expect(() => checkRecordSize(spec, null, value)).toThrow('a record for topic "t.a.out" is 1048577 bytes, more than the 1048576 its sink takes');
  });

  it('counts the key, and takes what maxRecordBytes allows', () => {
    expect(() => checkRecordSize(spec, Buffer.alloc(10), Buffer.alloc(1_048_570))).toThrow(SinkRecordTooLargeError);
    expect(() => checkRecordSize({ ...spec, maxRecordBytes: 4_000_000 }, null, Buffer.alloc(3_000_000))).not.toThrow();
    expect(() => checkRecordSize(spec, Buffer.alloc(6), Buffer.alloc(1_048_570))).not.toThrow();
  });
});

import type { IHeaders, KafkaMessage } from 'kafkajs';
import type { ConsumedRecord, KafkaHeaders } from './contract';

const NO_HEADERS: KafkaHeaders = Object.freeze({});

function toHeaders(headers: IHeaders | undefined): KafkaHeaders {
  if (!headers) return NO_HEADERS;
  let out: Record<string, Buffer | undefined> | null = null;
  for (const name in headers) {
    out ??= {};
    const value = headers[name];
    // A repeated header arrives as an array; Weir's headers are single-valued, the last one wins as in a map.
    const single = Array.isArray(value) ? value[value.length - 1] : value;
    out[name] = single === undefined ? undefined : Buffer.isBuffer(single) ? single : Buffer.from(single);
  }
  return out ?? NO_HEADERS;
}

/** kafkajs messages of one batch as Weir records: one small object each, no copies of keys or values. */
export function toRecords(topic: string, partition: number, messages: readonly KafkaMessage[]): ConsumedRecord[] {
  const out = new Array<ConsumedRecord>(messages.length);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    out[i] = {
      topic,
      partition,
      offset: m.offset,
      key: m.key ?? null,
      value: m.value,
      timestamp: Number(m.timestamp),
      headers: toHeaders(m.headers),
    };
  }
  return out;
}

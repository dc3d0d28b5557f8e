import { randomBytes } from 'node:crypto';
import type { ConsumedRecord, KafkaConnector } from '@weir/kafka';

/**
 * Reads every partition of `topic` from the earliest offset, with a reader of its own (engine-owned offsets), until
 * `until` holds or `deadlineMs` passes (the caller's assertions then say what is missing), then `settleMs` more so
 * that an extra (duplicate) record would be seen too.
 */
export async function readUntil(
  kafka: KafkaConnector,
  topic: string,
  partitions: number,
  until: (records: ConsumedRecord[]) => boolean,
  settleMs = 0,
  deadlineMs = 60_000,
): Promise<ConsumedRecord[]> {
  const reader = kafka.reader({
    readerId: `test-read-${topic}-${randomBytes(3).toString('hex')}`.replace(/[^A-Za-z0-9._-]/g, '-'),
    assignments: Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 'earliest' as const })),
  });
  await reader.start();
  const out: ConsumedRecord[] = [];
  try {
    const deadline = Date.now() + deadlineMs;
    while (!until(out) && Date.now() < deadline) out.push(...(await reader.poll(1_000, 200)));
    const settle = Date.now() + settleMs;
    while (Date.now() < settle) out.push(...(await reader.poll(1_000, 200)));
  } finally {
    await reader.close();
  }
  return out;
}

/** Reads until `count` records arrived (or the deadline passed). */
export const readCount = (kafka: KafkaConnector, topic: string, partitions: number, count: number): Promise<ConsumedRecord[]> =>
  readUntil(kafka, topic, partitions, (records) => records.length >= count);

/** A record's value as JSON. */
export const parseJson = <T>(r: ConsumedRecord): T => JSON.parse(r.value!.toString()) as T;

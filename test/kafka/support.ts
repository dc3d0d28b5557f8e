import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import {
  type ConsumedRecord,
  createKafkaConnector,
  type KafkaAdmin,
  type KafkaConnector,
  type KafkaReader,
  type ProducedRecord,
} from '@weir/kafka';

export const BROKERS = (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');

export function testConnector(): KafkaConnector {
  return createKafkaConnector({ brokers: BROKERS, clientId: 'weir-test' });
}

/** Topic names unique to this run, so reruns and parallel runs never see each other's records. */
export function uniqueTopic(name: string): string {
  return `test.kafka.${name}.${randomBytes(4).toString('hex')}`;
}

/** `count` records spread over `partitions` partitions, partition pinned, values that say where they belong. */
export function numberedRecords(topic: string, count: number, partitions: number, from = 0): ProducedRecord[] {
  return Array.from({ length: count }, (_, i) => {
    const n = from + i;
    return { topic, partition: n % partitions, key: `k${n}`, value: `v${n}` };
  });
}

/** Polls exactly `count` records (never more), or returns fewer once `idleMs` pass without a new one. */
export async function pollUntil(reader: KafkaReader, count: number, idleMs = 10_000): Promise<ConsumedRecord[]> {
  const out: ConsumedRecord[] = [];
  let lastArrival = Date.now();
  while (out.length < count) {
    const batch = await reader.poll(Math.min(1000, count - out.length), 200);
    if (batch.length > 0) lastArrival = Date.now();
    else if (Date.now() - lastArrival > idleMs) break;
    for (const r of batch) out.push(r);
  }
  return out;
}

/** Polls for `ms` and returns whatever arrived (to show that nothing more comes). */
export async function pollFor(reader: KafkaReader, ms: number): Promise<ConsumedRecord[]> {
  const out: ConsumedRecord[] = [];
  const until = Date.now() + ms;
  while (Date.now() < until) out.push(...(await reader.poll(1000, Math.max(1, until - Date.now()))));
  return out;
}

/** Values per partition, in the order read. */
export function valuesByPartition(records: readonly ConsumedRecord[]): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const r of records) {
    const list = out.get(r.partition) ?? [];
    list.push(r.value?.toString() ?? '');
    out.set(r.partition, list);
  }
  return out;
}

/** A test's topic, filled once before its tests; connector and admin are live between beforeAll and afterAll. */
export interface FilledTopic {
  readonly topic: string;
  connector: KafkaConnector;
  admin: KafkaAdmin;
}

/**
 * Creates a unique topic of `partitions` partitions before the suite, writes `records(topic)` to it in sends of at
 * most 500, and deletes it afterwards.
 */
export function filledTopic(name: string, partitions: number, records: (topic: string) => ProducedRecord[]): FilledTopic {
  const filled = { topic: uniqueTopic(name) } as FilledTopic;
  beforeAll(async () => {
    filled.connector = testConnector();
    filled.admin = filled.connector.admin();
    await filled.admin.ensureTopics([{ topic: filled.topic, partitions }]);
    const writer = filled.connector.writer({ writerId: `${name}-writer` });
    await writer.start();
    const all = records(filled.topic);
    for (let i = 0; i < all.length; i += 500) await writer.send(all.slice(i, i + 500));
    await writer.close();
  });
  afterAll(async () => {
    await filled.admin.deleteTopics([filled.topic]);
    await filled.admin.close();
  });
  return filled;
}

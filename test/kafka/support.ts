import { randomBytes } from 'node:crypto';
import {
  type ConsumedRecord,
  createKafkaConnector,
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

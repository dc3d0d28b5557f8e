/**
 * The demo's transaction stream into Kafka: @weir/datagen's seeded generator, paced on its schedule (each event
 * stamped with its scheduled time, so a stall shows up as latency), each transaction on the partition of its payer.
 */
import { paced, type Transaction, type TransactionStream } from '@weir/datagen';
import type { KafkaWriter } from '@weir/kafka';

export interface FeedProgress {
  sent: number;
  /** The most a batch went out behind its last event's scheduled time. */
  maxBehindMs: number;
}

/** A payer's partition: FNV-1a of the payer, so one payer's transactions stay in order on one partition. */
export function partitionOf(payer: string, partitions: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < payer.length; i++) h = Math.imul(h ^ payer.charCodeAt(i), 0x01000193);
  return (h >>> 0) % partitions;
}

export async function feedTransactions(writer: KafkaWriter, topic: string, stream: TransactionStream, count: number, partitions: number, progress: FeedProgress): Promise<Transaction[]> {
  const sent: Transaction[] = [];
  for await (const batch of paced(stream, { count, maxBatch: 2_000 })) {
    progress.maxBehindMs = Math.max(progress.maxBehindMs, Date.now() - batch[batch.length - 1].ts);
    await writer.send(batch.map((tx) => ({ topic, partition: partitionOf(tx.payer, partitions), key: tx.payer, value: JSON.stringify(tx), timestamp: tx.ts })));
    sent.push(...batch);
    progress.sent = sent.length;
  }
  return sent;
}

/**
 * One transaction per partition, `aheadMs` after the last: it moves every partition's event time past everything
 * sent, so the job judges all of it. Its own time is never passed, so it is never judged (and is not verified).
 */
export async function sendEndMarkers(writer: KafkaWriter, topic: string, partitions: number, ts: number): Promise<void> {
  await writer.send(
    Array.from({ length: partitions }, (_, partition) => {
      const tx: Transaction = { txId: `~end-${partition}`, ts, payer: `~end-${partition}`, beneficiary: '~end', card: '~end', merchant: '~end', amount: 1 };
      return { topic, partition, key: tx.payer, value: JSON.stringify(tx), timestamp: ts };
    }),
  );
}

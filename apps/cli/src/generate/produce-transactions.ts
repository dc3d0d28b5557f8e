import { paced, TransactionStream, type TransactionStreamOptions } from '@weir/datagen';
import type { KafkaConnector } from '@weir/kafka';

export interface ProduceOptions {
  readonly topic: string;
  /** Transactions in total (Infinity: until `signal` aborts). */
  readonly count: number;
  /** Stops the run after the batch in flight (what has been sent stays sent). */
  readonly signal?: AbortSignal;
  /** Created when missing with this many partitions (an existing topic must have at least as many). */
  readonly partitions?: number;
  readonly maxBatch?: number;
  readonly writerId?: string;
  /** Scheduled time of the first event; by default the moment the writer is ready (so the run starts on schedule). */
  readonly startTime?: number;
}

export interface ProduceSummary {
  readonly sent: number;
  readonly elapsedMs: number;
  /** The most a batch was sent behind the scheduled time of its last event: how far the producer fell behind. */
  readonly maxBehindMs: number;
}

/**
 * Produces a paced transaction stream to Kafka, one send per batch of due events, keyed by payer (one payer's
 * transactions stay in order on one partition). Values are the transactions as JSON; Kafka timestamps are the
 * scheduled times. One writer for the whole run: a long load is one call with a signal, not many short calls (each
 * call pays for a topic check and a producer start, and starts its schedule afresh).
 */
export async function produceTransactions(
  kafka: KafkaConnector,
  streamOptions: Omit<TransactionStreamOptions, 'startTime'>,
  options: ProduceOptions,
): Promise<ProduceSummary> {
  const admin = kafka.admin();
  try {
    await admin.ensureTopics([{ topic: options.topic, partitions: options.partitions ?? 1 }]);
  } finally {
    await admin.close();
  }
  const writer = kafka.writer({ writerId: options.writerId ?? `weir-cli-generate-${process.pid}` });
  await writer.start();
  const started = Date.now();
  const stream = new TransactionStream({ ...streamOptions, startTime: options.startTime ?? started });
  let sent = 0;
  let maxBehindMs = 0;
  try {
    for await (const batch of paced(stream, { count: options.count, maxBatch: options.maxBatch ?? 1_000 })) {
      if (options.signal?.aborted) break;
      maxBehindMs = Math.max(maxBehindMs, Date.now() - batch[batch.length - 1].ts);
      await writer.send(batch.map((tx) => ({ topic: options.topic, key: tx.payer, value: JSON.stringify(tx), timestamp: tx.ts })));
      sent += batch.length;
    }
  } finally {
    await writer.close();
  }
  return { sent, elapsedMs: Date.now() - started, maxBehindMs };
}

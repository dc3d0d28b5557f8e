/**
 * Plain kafkajs, used the obvious way, as the baseline Weir's Kafka path is measured against: producer.sendBatch,
 * consumer.run({ eachBatch }), and a consume → produce passthrough. Producer and fetch settings match Weir's
 * (idempotent, acks=all, one request in flight, the same fetch sizes) so a ratio shows the cost of the
 * abstraction, not of different settings.
 */
import { randomUUID } from 'node:crypto';
import { CompressionTypes, Kafka, logLevel, Partitioners, type Consumer, type Message } from 'kafkajs';
// Internal on purpose: the baseline must use exactly the connector's settings, which are not part of @weir/kafka.
import { fetchTuning } from '../libs/kafka/src/tuning';

/** The reader's own fetch settings, so the comparison is of code paths, not of settings. */
export const BASELINE_FETCH = fetchTuning;

const SEND_BATCH = 1_000;

export function baselineClient(brokers: readonly string[], clientId = 'weir-bench-baseline'): Kafka {
  return new Kafka({ clientId, brokers: [...brokers], logLevel: logLevel.WARN, connectionTimeout: 3_000 });
}

/** Sends pre-built batches with one idempotent producer, one batch at a time; returns elapsed ms. */
export async function rawProduce(kafka: Kafka, topic: string, batches: readonly Message[][]): Promise<number> {
  const producer = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await producer.connect();
  try {
    const started = performance.now();
    for (const messages of batches) {
      await producer.sendBatch({ topicMessages: [{ topic, messages }], acks: -1, compression: CompressionTypes.None });
    }
    return performance.now() - started;
  } finally {
    await producer.disconnect();
  }
}

export interface ConsumeResult {
  /** From run() to the last record, the group join included (as for Weir's reader). */
  readonly elapsedMs: number;
  /** Sum of value sizes: every value is touched, and two readers of one topic must agree on it. */
  readonly valueBytes: number;
}

/** A promise the caller resolves with the elapsed ms once it has seen enough; a consumer crash rejects it. */
function completion(consumer: Consumer): { done: Promise<number>; finish: (ms: number) => void } {
  let finish: (ms: number) => void = () => undefined;
  const done = new Promise<number>((resolve, reject) => {
    finish = resolve;
    consumer.on(consumer.events.CRASH, ({ payload }) => reject(payload.error));
  });
  return { done, finish };
}

/** Reads `count` records of `topic` from the beginning with a fresh consumer group (no commits). */
export async function rawConsume(kafka: Kafka, topic: string, count: number, timeoutMs = 60_000): Promise<ConsumeResult> {
  const consumer = kafka.consumer({ groupId: `weir-bench-raw-${randomUUID()}`, ...BASELINE_FETCH });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  let seen = 0;
  let bytes = 0;
  try {
    const started = performance.now();
    const { done, finish } = completion(consumer);
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const wanted = Math.min(batch.messages.length, count - seen);
        for (let i = 0; i < wanted; i++) bytes += batch.messages[i].value?.length ?? 0;
        seen += wanted;
        if (wanted > 0 && seen >= count) finish(performance.now() - started);
      },
    });
    const elapsedMs = await withTimeout(done, timeoutMs, `raw consume of ${topic} saw ${seen}/${count} records`);
    return { elapsedMs, valueBytes: bytes };
  } finally {
    await consumer.disconnect();
  }
}

export interface PassthroughOptions {
  readonly brokers: readonly string[];
  /** Read from the beginning; must hold at least `records` records. */
  readonly sourceTopic: string;
  /** Must exist; the same partition count as the source keeps keys where they were. */
  readonly sinkTopic: string;
  readonly records: number;
  readonly timeoutMs?: number;
}

/**
 * Raw kafkajs consume → produce of `records` records from one topic into another, the floor any engine running the
 * same pipe through kafkajs sits on. Each fetched batch is forwarded (key, value, headers, timestamp) in awaited
 * sendBatch calls of at most 1,000 records (a whole fetch can exceed the broker's 1 MiB batch limit); the await is
 * also the backpressure. Returns records per second, from run() to the last ack.
 */
export async function passthrough(options: PassthroughOptions): Promise<number> {
  const kafka = baselineClient(options.brokers, 'weir-bench-passthrough');
  const producer = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    idempotent: true,
    maxInFlightRequests: 1,
  });
  const consumer = kafka.consumer({ groupId: `weir-bench-passthrough-${randomUUID()}`, ...BASELINE_FETCH });
  await Promise.all([producer.connect(), consumer.connect()]);
  await consumer.subscribe({ topics: [options.sourceTopic], fromBeginning: true });
  let forwarded = 0;
  try {
    const started = performance.now();
    const { done, finish } = completion(consumer);
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const wanted = Math.min(batch.messages.length, options.records - forwarded);
        for (let from = 0; from < wanted; from += SEND_BATCH) {
          const to = Math.min(wanted, from + SEND_BATCH);
          const messages: Message[] = new Array(to - from);
          for (let i = from; i < to; i++) {
            const m = batch.messages[i];
            messages[i - from] = { key: m.key, value: m.value, headers: m.headers, timestamp: m.timestamp };
          }
          await producer.sendBatch({
            topicMessages: [{ topic: options.sinkTopic, messages }],
            acks: -1,
            compression: CompressionTypes.None,
          });
        }
        if (wanted <= 0) return;
        forwarded += wanted;
        if (forwarded >= options.records) finish(performance.now() - started);
      },
    });
    const elapsedMs = await withTimeout(
      done,
      options.timeoutMs ?? 120_000,
      `passthrough ${options.sourceTopic} → ${options.sinkTopic} forwarded ${forwarded}/${options.records}`,
    );
    return (options.records / elapsedMs) * 1000;
  } finally {
    await consumer.disconnect();
    await producer.disconnect();
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

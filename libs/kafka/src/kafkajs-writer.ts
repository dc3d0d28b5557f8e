import { CompressionTypes, type Message, type Producer, type Kafka, type TopicMessages } from 'kafkajs';
import type { KafkaTransaction, KafkaWriter, ProducedRecord, WriterOptions } from './contract';
import { KafkaUsageError, wrapKafkaError } from './errors';
import { withLinearGrouping } from './linear-grouping';
import { javaCompatiblePartitioner } from './partitioner';
import { producerTuning } from './tuning';

/**
 * Groups records per topic for one sendBatch; consecutive records of one topic (the usual case) skip the lookup. Each
 * topic's array groups itself per partition in linear time (linear-grouping.ts).
 *
 * A record whose key is already bytes (or absent) goes to kafkajs as it is: kafkajs reads only key, value, partition,
 * headers and timestamp from a message and copies it before encoding, and a numeric timestamp encodes exactly as
 * its decimal string does (Long.fromValue; kafkajs's own timestamp sort compares them as strings either way). That
 * saves an object per record on the sink path. A string key becomes bytes once here, for both the partitioner and
 * the request encoder.
 */
export function toTopicMessages(records: readonly ProducedRecord[]): TopicMessages[] {
  const byTopic = new Map<string, Message[]>();
  let lastTopic: string | null = null;
  let lastMessages: Message[] = [];
  for (const r of records) {
    if (r.topic !== lastTopic) {
      lastTopic = r.topic;
      lastMessages = byTopic.get(r.topic) ?? withLinearGrouping([]);
      if (lastMessages.length === 0) byTopic.set(r.topic, lastMessages);
    }
    if (typeof r.key !== 'string') {
      lastMessages.push(r as unknown as Message);
      continue;
    }
    lastMessages.push({
      key: Buffer.from(r.key),
      value: r.value,
      partition: r.partition,
      headers: r.headers as Message['headers'],
      timestamp: r.timestamp as unknown as string,
    });
  }
  return Array.from(byTopic, ([topic, messages]) => ({ topic, messages }));
}

const RECORD_OVERHEAD_BYTES = 70;

function byteLength(data: Buffer | string | null | undefined): number {
  if (data === null || data === undefined) return 0;
  return typeof data === 'string' ? data.length * 3 : data.length;
}

/**
 * Splits a send into requests of at most ~`maxBytes` (upper-bound estimate), in order. kafkajs puts everything for
 * one partition into a single record batch, and brokers refuse batches over message.max.bytes (1 MiB by default),
 * so one big engine flush must not become one oversized batch.
 */
export function splitBySize(records: readonly ProducedRecord[], maxBytes: number): (readonly ProducedRecord[])[] {
  const chunks: (readonly ProducedRecord[])[] = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    let size = RECORD_OVERHEAD_BYTES + byteLength(r.key) + byteLength(r.value);
    if (r.headers) for (const name in r.headers) size += name.length * 3 + byteLength(r.headers[name]);
    if (i > start && bytes + size > maxBytes) {
      chunks.push(records.slice(start, i));
      start = i;
      bytes = 0;
    }
    bytes += size;
  }
  if (start === 0) chunks.push(records);
  else if (start < records.length) chunks.push(records.slice(start));
  return chunks;
}

/**
 * An idempotent kafkajs producer (acks=all). With a transactionalId it also opens transactions; plain send() on such a
 * writer stays idempotent but outside any transaction (read_committed readers see it at once).
 */
export class KafkajsWriter implements KafkaWriter {
  private readonly producer: Producer;
  private readonly compression: CompressionTypes;
  private state: 'new' | 'started' | 'closed' = 'new';

  constructor(
    kafka: Kafka,
    private readonly options: WriterOptions,
    private readonly brokers: readonly string[],
  ) {
    this.compression = options.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None;
    this.producer = kafka.producer({
      // Java-compatible murmur2 partitioning, so keyed records land where Java/Kafka Streams producers put them
      // (kafkajs's DefaultPartitioner, in 32-bit arithmetic: partitioner.ts).
      createPartitioner: javaCompatiblePartitioner,
      idempotent: true,
      allowAutoTopicCreation: false,
      transactionalId: options.transactionalId,
      maxInFlightRequests: producerTuning.maxInFlightRequests,
      transactionTimeout: producerTuning.transactionTimeout,
    });
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new KafkaUsageError(`Writer ${this.options.writerId} was already started`);
    try {
      await this.producer.connect();
      this.state = 'started';
    } catch (error) {
      throw wrapKafkaError(error, `starting writer ${this.options.writerId}`, this.brokers);
    }
  }

  async send(records: readonly ProducedRecord[]): Promise<void> {
    this.assertStarted('send');
    if (records.length === 0) return;
    try {
      for (const chunk of splitBySize(records, producerTuning.maxRequestBytes)) {
        await this.producer.sendBatch({ topicMessages: toTopicMessages(chunk), acks: -1, compression: this.compression });
      }
    } catch (error) {
      throw wrapKafkaError(error, `sending ${records.length} records (${this.options.writerId})`, this.brokers);
    }
  }

  async transaction(): Promise<KafkaTransaction> {
    this.assertStarted('open a transaction');
    if (!this.options.transactionalId) {
      throw new KafkaUsageError(`Writer ${this.options.writerId} has no transactionalId: it cannot open transactions`);
    }
    const id = this.options.transactionalId;
    const brokers = this.brokers;
    const compression = this.compression;
    try {
      const tx = await this.producer.transaction();
      let ended = false;
      const end = async (how: 'commit' | 'abort'): Promise<void> => {
        if (ended) throw new KafkaUsageError(`Transaction of ${id} already ended; open a new one`);
        ended = true;
        try {
          await (how === 'commit' ? tx.commit() : tx.abort());
        } catch (error) {
          throw wrapKafkaError(error, `${how === 'commit' ? 'committing' : 'aborting'} a transaction of ${id}`, brokers);
        }
      };
      return {
        async send(records) {
          if (ended) throw new KafkaUsageError(`Transaction of ${id} already ended; open a new one`);
          if (records.length === 0) return;
          try {
            for (const chunk of splitBySize(records, producerTuning.maxRequestBytes)) {
              await tx.sendBatch({ topicMessages: toTopicMessages(chunk), acks: -1, compression });
            }
          } catch (error) {
            throw wrapKafkaError(error, `sending ${records.length} records in a transaction of ${id}`, brokers);
          }
        },
        commit: () => end('commit'),
        abort: () => end('abort'),
      };
    } catch (error) {
      throw wrapKafkaError(error, `opening a transaction of ${id}`, brokers);
    }
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    const wasStarted = this.state === 'started';
    this.state = 'closed';
    if (wasStarted) await this.producer.disconnect().catch(() => undefined);
  }

  private assertStarted(what: string): void {
    if (this.state !== 'started') {
      throw new KafkaUsageError(`Writer ${this.options.writerId} cannot ${what}: it is ${this.state}, not started`);
    }
  }
}

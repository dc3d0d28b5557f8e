import { CompressionTypes, type Message, type Producer, type Kafka, type TopicMessages } from 'kafkajs';
import type { KafkaTransaction, KafkaWriter, ProducedRecord, WriterOptions } from './contract';
import { isStaleMetadataError, KafkaUsageError, wrapKafkaError } from './errors';
import { withLinearGrouping } from './linear-grouping';
import { javaCompatiblePartitioner } from './partitioner';
import { failFastRetry, producerTuning } from './tuning';

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
 *
 * A plain writer outlives changes to the cluster: kafkajs asks for every topic a producer ever wrote to whenever it
 * refreshes metadata, so after one of them is deleted every later send fails ("This server does not host this
 * topic-partition"), to any topic, until the process restarts (tulios/kafkajs#1622). A send that fails with stale
 * metadata therefore gets a fresh producer, which knows only the topics it is sent to, and one retry of what was not
 * yet acknowledged. That cannot duplicate records: a refresh fails before anything is produced, and a chunk whose own
 * topic is gone fails again on the retry's refresh. Transactional writers are left alone: a transaction belongs to
 * the producer that opened it, and their owner (the exactly-once sink) restarts from a checkpoint instead.
 */
export class KafkajsWriter implements KafkaWriter {
  private producer: Producer;
  /** The current producer's connect(), kept so a failed one is tried again by the next call. */
  private connection: Promise<void> | null = null;
  private readonly compression: CompressionTypes;
  private state: 'new' | 'started' | 'closed' = 'new';
  /** Sends in flight per producer: a replaced producer disconnects once its last one settles. */
  private readonly inFlight = new Map<Producer, number>();
  private readonly retired = new Set<Producer>();

  constructor(
    private readonly kafka: Kafka,
    private readonly options: WriterOptions,
    private readonly brokers: readonly string[],
  ) {
    this.compression = options.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None;
    this.producer = this.newProducer();
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new KafkaUsageError(`Writer ${this.options.writerId} was already started`);
    try {
      await this.connected();
      this.state = 'started';
    } catch (error) {
      throw wrapKafkaError(error, `starting writer ${this.options.writerId}`, this.brokers);
    }
  }

  async send(records: readonly ProducedRecord[]): Promise<void> {
    this.assertStarted('send');
    if (records.length === 0) return;
    const chunks = splitBySize(records, producerTuning.maxRequestBytes);
    const action = `sending ${records.length} records (${this.options.writerId})`;
    const first = await this.sendChunks(chunks, 0);
    if (!first) return;
    if (this.options.transactionalId || !isStaleMetadataError(first.cause)) throw wrapKafkaError(first.cause, action, this.brokers);
    try {
      this.replace(first.producer);
      await this.connected();
    } catch (error) {
      throw wrapKafkaError(error, `replacing the producer of ${this.options.writerId} after a metadata change`, this.brokers);
    }
    const retry = await this.sendChunks(chunks, first.chunk);
    if (retry) throw wrapKafkaError(retry.cause, action, this.brokers);
  }

  /**
   * Sends chunks from `from` on, in order, on the current producer. Resolves with nothing once all are acknowledged,
   * else with the first chunk not acknowledged, the producer that failed and why.
   */
  private async sendChunks(chunks: readonly (readonly ProducedRecord[])[], from: number): Promise<{ chunk: number; producer: Producer; cause: unknown } | undefined> {
    const producer = this.producer;
    this.inFlight.set(producer, (this.inFlight.get(producer) ?? 0) + 1);
    let chunk = from;
    try {
      await this.connected();
      for (; chunk < chunks.length; chunk++) {
        await producer.sendBatch({ topicMessages: toTopicMessages(chunks[chunk]), acks: -1, compression: this.compression });
      }
      return undefined;
    } catch (cause) {
      return { chunk, producer, cause };
    } finally {
      const left = (this.inFlight.get(producer) ?? 1) - 1;
      if (left > 0) this.inFlight.set(producer, left);
      else {
        this.inFlight.delete(producer);
        if (this.retired.delete(producer)) void producer.disconnect().catch(() => undefined);
      }
    }
  }

  /** A fresh producer in place of `stale`, once however many concurrent sends saw it fail; `stale` goes when idle. */
  private replace(stale: Producer): void {
    if (this.producer !== stale) return;
    this.producer = this.newProducer();
    this.connection = null;
    if (this.inFlight.has(stale)) this.retired.add(stale);
    else void stale.disconnect().catch(() => undefined);
  }

  private connected(): Promise<void> {
    this.connection ??= this.producer.connect().catch((error: unknown) => {
      this.connection = null;
      throw error;
    });
    return this.connection;
  }

  private newProducer(): Producer {
    return this.kafka.producer({
      // Java-compatible murmur2 partitioning, so keyed records land where Java/Kafka Streams producers put them
      // (kafkajs's DefaultPartitioner, in 32-bit arithmetic: partitioner.ts).
      createPartitioner: javaCompatiblePartitioner,
      idempotent: true,
      allowAutoTopicCreation: false,
      transactionalId: this.options.transactionalId,
      maxInFlightRequests: producerTuning.maxInFlightRequests,
      transactionTimeout: producerTuning.transactionTimeout,
      ...(this.options.failFast ? { retry: failFastRetry } : {}),
    });
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
    if (!wasStarted) return;
    await Promise.allSettled([this.producer, ...this.retired].map((p) => p.disconnect()));
    this.retired.clear();
  }

  private assertStarted(what: string): void {
    if (this.state !== 'started') {
      throw new KafkaUsageError(`Writer ${this.options.writerId} cannot ${what}: it is ${this.state}, not started`);
    }
  }
}

/** Source and sink specifications: plain data plus user callbacks, interpreted by the runtime. */
import type { Serde } from './serde';

export interface WatermarkStrategy {
  /** Watermark = highest timestamp seen − maxOutOfOrdernessMs − 1 (per partition, min across partitions). */
  readonly maxOutOfOrdernessMs: number;
  /** A partition without records for this long (processing time) stops holding the watermark back. */
  readonly idleTimeoutMs?: number;
}

export interface EventTimeOptions<T> {
  /** Event time of a record; defaults to the Kafka record timestamp / the generator's scheduled time. */
  readonly timestamps?: (value: T, sourceTimestamp: number) => number;
  readonly watermarks?: WatermarkStrategy;
}

export interface KafkaSourceSpec<T> extends EventTimeOptions<T> {
  readonly kind: 'kafka';
  readonly topic: string;
  readonly format: Serde<T>;
  /** Where to start when no checkpointed offset exists. */
  readonly startFrom: 'earliest' | 'latest';
}

export interface GeneratorSourceSpec<T> extends EventTimeOptions<T> {
  readonly kind: 'generator';
  readonly seed: number;
  /** Records in total; unbounded when absent. */
  readonly count?: number;
  /** Fixed rate (records/s across all subtasks); as fast as possible when absent. */
  readonly ratePerSec?: number;
  /** Builds record `index`; `random` is a seeded PRNG (deterministic per seed and subtask layout). */
  readonly generate: (index: number, random: () => number) => T;
  /** Encodes values for dead letters; defaults to JSON. */
  readonly format?: Serde<T>;
}

/** Fed by the test driver (or RunningJob.push) in one process. */
export interface MemorySourceSpec<T> extends EventTimeOptions<T> {
  readonly kind: 'memory';
  readonly format?: Serde<T>;
}

export type SourceSpec<T> = KafkaSourceSpec<T> | GeneratorSourceSpec<T> | MemorySourceSpec<T>;

export interface KafkaSinkSpec<T> {
  readonly kind: 'kafka';
  readonly topic: string;
  readonly format: Serde<T>;
  /** Kafka record key; null/absent lets the broker spread records. */
  readonly key?: (value: T) => string | null;
  /**
   * The largest record (key and value, encoded) the sink sends; a larger one fails the job, naming it. Default
   * 1,048,576, Kafka's default `message.max.bytes`: raise it only where the topic's brokers take more.
   */
  readonly maxRecordBytes?: number;
}

export interface MemorySinkSpec {
  readonly kind: 'memory';
}

/**
 * Hands each batch of results to a function in this process, as the sink receives it: for local runs, tests and
 * benchmarks that fold results as they come instead of keeping them all (memorySink keeps every result until the
 * job is gone). The function runs on the sink subtask's event loop, so it must not block; it gets no retries.
 */
export interface CallbackSinkSpec<T> {
  readonly kind: 'callback';
  readonly write: (batch: readonly SinkResult<T>[]) => void;
}

/** One result as a sink receives it: the value and its event time. */
export interface SinkResult<T> {
  readonly value: T;
  readonly timestamp: number;
}

export type SinkSpec<T> = KafkaSinkSpec<T> | MemorySinkSpec | CallbackSinkSpec<T>;

export function kafkaSource<T>(spec: Omit<KafkaSourceSpec<T>, 'kind' | 'startFrom'> & { startFrom?: 'earliest' | 'latest' }): KafkaSourceSpec<T> {
  return { kind: 'kafka', startFrom: 'earliest', ...spec };
}

export function generatorSource<T>(spec: Omit<GeneratorSourceSpec<T>, 'kind'>): GeneratorSourceSpec<T> {
  return { kind: 'generator', ...spec };
}

export function memorySource<T>(spec: Omit<MemorySourceSpec<T>, 'kind'> = {}): MemorySourceSpec<T> {
  return { kind: 'memory', ...spec };
}

export function kafkaSink<T>(spec: Omit<KafkaSinkSpec<T>, 'kind'>): KafkaSinkSpec<T> {
  return { kind: 'kafka', ...spec };
}

export function memorySink(): MemorySinkSpec {
  return { kind: 'memory' };
}

export function callbackSink<T>(write: (batch: readonly SinkResult<T>[]) => void): CallbackSinkSpec<T> {
  return { kind: 'callback', write };
}

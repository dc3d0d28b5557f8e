import type { KafkaSinkSpec } from '../../sdk/connectors';

/** Kafka's default for the largest record a broker takes (`message.max.bytes`, 1 MiB plus its record overhead). */
export const DEFAULT_MAX_RECORD_BYTES = 1_048_576;

/** A sink was handed a record larger than its topic takes: the job fails with this, naming the topic and the sizes. */
export class SinkRecordTooLargeError extends Error {
  override readonly name = 'SinkRecordTooLargeError';
}

/**
 * Refuses, before it is sent, a record the broker would refuse: sent, kafkajs's error would surface only at the next
 * write or checkpoint (the writer is write-behind), and meanwhile the sink would sit stuck. Raise the limit with the
 * sink's `maxRecordBytes` where the topic's brokers take more.
 */
export function checkRecordSize(spec: KafkaSinkSpec<unknown>, key: Uint8Array | null, value: Uint8Array): void {
  const limit = spec.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  const size = (key?.length ?? 0) + value.length;
  if (size > limit) {
    throw new SinkRecordTooLargeError(
      `a record for topic "${spec.topic}" is ${size} bytes, more than the ${limit} its sink takes (kafkaSink's maxRecordBytes, Kafka's message.max.bytes by default): the job must emit smaller records`,
    );
  }
}

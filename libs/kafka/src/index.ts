export type {
  ConsumedRecord,
  KafkaAdmin,
  KafkaConnector,
  KafkaConnectorConfig,
  KafkaCredentials,
  KafkaGrant,
  KafkaHeaders,
  KafkaLogLevel,
  KafkaLogSink,
  KafkaReader,
  KafkaTransaction,
  KafkaWriter,
  PartitionAssignment,
  ProducedRecord,
  ReaderOptions,
  StartOffset,
  TopicSpec,
  WriterOptions,
} from './contract';
export {
  KafkaAccessDeniedError,
  KafkaError,
  KafkaFencedError,
  KafkaUnavailableError,
  KafkaUsageError,
  TopicConfigError,
  TopicNotFoundError,
} from './errors';
export { createKafkaConnector } from './kafkajs-connector';
export { readerGroupIdPrefix } from './kafkajs-reader';
export { partitionKey } from './record-buffer';

export type {
  ConsumedRecord,
  KafkaAdmin,
  KafkaConnector,
  KafkaConnectorConfig,
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
  KafkaError,
  KafkaFencedError,
  KafkaUnavailableError,
  KafkaUsageError,
  TopicConfigError,
  TopicNotFoundError,
} from './errors';
export { createKafkaConnector } from './kafkajs-connector';
export { partitionKey } from './record-buffer';

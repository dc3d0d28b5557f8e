export {
  runJob,
  JobRunError,
  type RunJobOptions,
  type RunningJob,
  type SubtaskContext,
  type MemorySourceRecord,
  type CheckpointSnapshot,
  type StageShape,
} from './run-job';
export type { SubtaskSnapshot } from './subtask';
export { MemoryBootstrapPeers, type BootstrapPeers } from './broadcast-bootstrap';
export type { ParallelismOption } from './plan';
export { systemClock, type Clock, type DeadLetter } from './ports';
export type { CollectedRecord } from './connectors/sink-writers';
export { ExchangeError, type KeyGroupMove } from './exchange/exchange';
export type { KeyGroupHandover } from './key-group-moves';
export { UndeclaredStateError } from './keyed-state';
export { exchangeTopic } from './exchange/kafka-exchange-wire';
export {
  deadLetterTopic,
  jobClientId,
  jobInternalTopicPrefix,
  runControlTopic,
  tenantClientIdPrefix,
  tenantInternalTopicPrefix,
  tenantTopicPrefix,
} from './topic-names';
export {
  commitMarkerKey,
  commitSinkEpoch,
  sinkCommitsTopic,
  sinkTransactionalId,
  type EncodedSinkRecord,
  type SinkEpoch,
} from './connectors/exactly-once-sink';

export { WORKER_EVENTS_QUEUE, WORKER_ID_PATTERN, workerCommandsQueue } from './names';
export { PROTOCOL_VERSION, subtaskRefSchema, type SubtaskRef } from './messages/common';
export { metricsSnapshotSchema, type MetricsSnapshotMessage } from './messages/metrics-snapshot';
export {
  runningSubtaskSchema,
  workerDescriptorSchema,
  workerEventSchema,
  type RunningSubtask,
  type WorkerDescriptor,
  type WorkerEvent,
  type WorkerEventType,
  type WorkerHeartbeat,
  type WorkerStarted,
  type WorkerStopping,
} from './messages/worker-events';
export {
  moveKeyGroupsSchema,
  moveReportSchema,
  rescaleProgressSchema,
  rescaleReportSchema,
  rescaleRunSchema,
  runProcessSchema,
  runSubtasksSchema,
  stopSubtasksSchema,
  takeSavepointSchema,
  workerCommandSchema,
  type MoveKeyGroups,
  type SplitKeys,
  splitKeysSchema,
  type MoveReport,
  type RescaleProgress,
  type RescaleReport,
  type RescaleRun,
  type RunProcess,
  type RunSubtasks,
  type StopSubtasks,
  type TakeSavepoint,
  type SubtaskAssignment,
  type WorkerCommand,
  type WorkerCommandType,
} from './messages/commands';
export { CommandRejectedError, ProtocolTimeoutError, ProtocolValidationError } from './errors';
export type { ProtocolConfig } from './connection';
export type { ProtocolLogger } from './logger';
export { parseMessage } from './validate';
export {
  createWorkerReporter,
  type WorkerIdentity,
  type WorkerReporter,
  type WorkerReporterConfig,
  type WorkerReporterOptions,
  type WorkerStatus,
} from './worker-reporter';
export {
  createCommandConsumer,
  type CommandConsumer,
  type CommandConsumerOptions,
  type CommandContext,
  type CommandHandlers,
} from './command-consumer';
export { createCommandDispatcher, type CommandDispatcher } from './command-dispatcher';
export {
  createWorkerEventConsumer,
  type WorkerEventConsumer,
  type WorkerEventConsumerOptions,
} from './worker-event-consumer';

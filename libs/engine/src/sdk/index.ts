export { defineJob, instantiateJob, isParameterizedJob, type JobOptions, type ParameterizedJob } from './define-job';
export {
  param,
  resolveParameters,
  JobParameterError,
  type JobConfig,
  type JobParameters,
  type JobParameterSpecs,
  type ParameterProblem,
  type PropertyParameter,
  type TopicParameter,
} from './parameters';
export { DataStream, KeyedStream, BroadcastStream, BroadcastConnectedStream, StreamBuilder, JobDefinitionError } from './stream';
export { operatorIdsOf, type JobDefinition, type NodeSpec } from './graph';
export * from './functions';
export * from './state';
export * from './serde';
export * from './connectors';
export {
  tumbling,
  sliding,
  session,
  assignWindows,
  aggregate,
  reduce,
  processWindow,
  InvalidWindowError,
  type TimeWindow,
  type WindowAssigner,
  type AggregateFunction,
  type WindowResult,
  type WindowFunctionSpec,
  type WindowOptions,
  type WindowPartial,
} from './windows';

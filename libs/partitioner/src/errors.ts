/**
 * Raised when the planner or the router is given input that breaks an invariant (an owner outside [0, n), weights
 * that do not describe a distribution, a policy whose thresholds cross). The caller's bug, never the job's: the
 * message names the field and the value so it can be fixed without reading this library.
 */
export class PartitionerInputError extends Error {
  override readonly name = 'PartitionerInputError';
}

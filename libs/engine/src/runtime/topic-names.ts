/**
 * Kafka topic names of tenants and their jobs: the one place both the control plane (deployment configs, rules
 * topics) and the worker (the job host's namespace check, dead letters) and the engine (exchanges, sink commits)
 * take them from.
 */

/** Every topic a tenant's job reads or writes lives under this prefix. */
export function tenantTopicPrefix(tenantId: string): string {
  return `t.${tenantId}.`;
}

/** The topics Weir creates for one job (exchanges, sink commit markers, dead letters) live under this prefix. */
export function jobInternalTopicPrefix(tenantId: string, jobId: string): string {
  return `weir.${tenantId}.${jobId}.`;
}

/** A job's dead-letter topic. */
export function deadLetterTopic(tenantId: string, jobId: string): string {
  return `${jobInternalTopicPrefix(tenantId, jobId)}dead-letters`;
}

/** The topic a job's processes coordinate its checkpoints over (one partition: one order for every process). */
export function runControlTopic(tenantId: string, jobId: string): string {
  return `${jobInternalTopicPrefix(tenantId, jobId)}control`;
}

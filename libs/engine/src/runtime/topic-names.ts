/**
 * Kafka names of tenants and their jobs (topics, and the ids of their clients, groups and transactions): the one place both the control plane (deployment configs, rules
 * topics) and the worker (the job host's namespace check, dead letters) and the engine (exchanges, sink commits)
 * take them from.
 */

/** Every topic a tenant's job reads or writes lives under this prefix. */
export function tenantTopicPrefix(tenantId: string): string {
  return `t.${tenantId}.`;
}

/** The topics Weir creates for a tenant's jobs live under this prefix. */
export function tenantInternalTopicPrefix(tenantId: string): string {
  return `weir.${tenantId}.`;
}

/** The topics Weir creates for one job (exchanges, sink commit markers, dead letters) live under this prefix. */
export function jobInternalTopicPrefix(tenantId: string, jobId: string): string {
  return `${tenantInternalTopicPrefix(tenantId)}${jobId}.`;
}

/**
 * The client, consumer-group and transactional ids of a tenant's jobs start with this. A tenant id cannot hold a
 * '.', so one tenant's prefix never covers another's: the tenant's Kafka ACLs are granted by it.
 */
export function tenantClientIdPrefix(tenantId: string): string {
  return `weir.${tenantId}.`;
}

/** The id of one Kafka client of a job (`what` names the client: a source subtask, a sink's transaction...). */
export function jobClientId(tenantId: string, jobId: string, what: string): string {
  return `${tenantClientIdPrefix(tenantId)}${jobId}-${what}`;
}

/** A job's dead-letter topic. */
export function deadLetterTopic(tenantId: string, jobId: string): string {
  return `${jobInternalTopicPrefix(tenantId, jobId)}dead-letters`;
}

/** The topic a job's processes coordinate its checkpoints over (one partition: one order for every process). */
export function runControlTopic(tenantId: string, jobId: string): string {
  return `${jobInternalTopicPrefix(tenantId, jobId)}control`;
}

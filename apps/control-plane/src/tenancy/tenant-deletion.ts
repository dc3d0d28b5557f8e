import { RESTING_STATUSES, type DeploymentStatus } from '../deployments/deployment';
import type { LiveDeployment } from './tenant-deletion.problems';

/**
 * Whether a deployment keeps its tenant from being deleted: it could be running now or start later.
 * - A run still open (no ended_at) means a worker may hold it, whatever the status says.
 * - Only the resting statuses (SUSPENDED, FAILED, FINISHED, CANCELLED) are ones the reconciler never leaves on its
 *   own; every other status is a run starting, running or stopping.
 * - Desired RUNNING on a resting status is a tenant asking for it to run: SUSPENDED resumes at once, FAILED and
 *   FINISHED restart on the next PATCH or upgrade. Deleting it would silently undo that request, so it must be
 *   cancelled or suspended first (desired SUSPENDED or CANCELLED only ever stops, or moves between resting statuses).
 */
export function couldRun(d: { readonly status: DeploymentStatus; readonly desiredState: string; readonly openRun: boolean }): boolean {
  return d.openRun || !RESTING_STATUSES.includes(d.status) || d.desiredState === 'RUNNING';
}

export function liveDeployments(all: readonly (LiveDeployment & { readonly status: DeploymentStatus })[]): LiveDeployment[] {
  return all.filter(couldRun);
}

/**
 * Every table holding a tenant's rows, children before the tables they reference: none of the foreign keys to
 * tenants cascades (on purpose: a stray DELETE of a tenant row must fail, not take everything with it), and
 * rule_rollouts → rule_versions, slo_events → slos, deployment_* → deployments, deployments → bundles restrict or
 * cascade only from their parent. A table added later and missing here makes the final DELETE of the tenant row fail
 * on its foreign key (a 500, the tenant stays marked), never leaves rows behind silently.
 * idempotency_keys has no foreign key (its scope may be `_platform`) but holds the tenant's replies all the same.
 */
export const TENANT_TABLES = [
  'rule_rollout_acks',
  'rule_rollouts',
  'rule_versions',
  'slo_events',
  'slo_minutes',
  'slos',
  'deployment_scaling_policy_changes',
  'deployment_scaling_policies',
  'deployment_scaling_decisions',
  'deployment_key_group_moves',
  'deployment_rescales',
  'deployment_restores',
  'deployment_transitions',
  'deployment_runs',
  'deployments',
  'bundles',
  'api_keys',
  'idempotency_keys',
] as const;

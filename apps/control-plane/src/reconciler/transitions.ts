import type { DeploymentStatus } from '../deployments/deployment';

/**
 * Every move the reconciler may make between observed statuses, in one place (the state diagram of
 * docs/deployments.md). A state handler decides where to go; this table decides whether it may, so a handler bug
 * cannot move a deployment somewhere the lifecycle has no edge to (out of CANCELLED, FINISHED straight to RUNNING).
 * A status does not list itself: staying is not a transition.
 */
export const ALLOWED_TRANSITIONS: Readonly<Record<DeploymentStatus, readonly DeploymentStatus[]>> = {
  CREATED: ['STARTING', 'SUSPENDED', 'CANCELLED'],
  // The four statuses that drive a run to RUNNING (drive-to-running.ts): it runs, fails (reported, refused, not in
  // time, or never placed), loses a process, or the desired state changes meanwhile.
  STARTING: ['RUNNING', 'FAILED', 'RECOVERING', 'STOPPING'],
  RESCALING: ['RUNNING', 'FAILED', 'RECOVERING', 'STOPPING'],
  UPGRADING: ['RUNNING', 'FAILED', 'RECOVERING', 'STOPPING'],
  RECOVERING: ['RUNNING', 'FAILED', 'STOPPING'],
  // SUSPENDED straight from RUNNING: the tenant's stop-with-savepoint, once the job left with its savepoint.
  RUNNING: ['STOPPING', 'SUSPENDED', 'UPGRADING', 'RESCALING', 'RECOVERING', 'FAILED', 'FINISHED'],
  STOPPING: ['SUSPENDED', 'CANCELLED'],
  SUSPENDED: ['STARTING', 'CANCELLED'],
  FAILED: ['STARTING', 'UPGRADING', 'RESCALING', 'SUSPENDED', 'CANCELLED'],
  FINISHED: ['STARTING', 'UPGRADING', 'SUSPENDED', 'CANCELLED'],
  CANCELLED: [],
};

export class IllegalTransitionError extends Error {
  override readonly name = 'IllegalTransitionError';

  constructor(
    readonly from: DeploymentStatus,
    readonly to: DeploymentStatus,
    reason: string,
  ) {
    const allowed = ALLOWED_TRANSITIONS[from];
    super(`illegal deployment transition ${from} → ${to} ("${reason}"): ${from} may go to ${allowed.length ? allowed.join(', ') : 'nothing (final)'}`);
  }
}

export function isAllowedTransition(from: DeploymentStatus, to: DeploymentStatus): boolean {
  return ALLOWED_TRANSITIONS[from].includes(to);
}

/** Refuses a transition the table lacks; the reconciler calls it before it stores any transition. */
export function assertTransition(from: DeploymentStatus, to: DeploymentStatus, reason: string): void {
  if (!isAllowedTransition(from, to)) throw new IllegalTransitionError(from, to, reason);
}

import { ProblemException } from '../problems/problem.exception';
import { PROBLEM_TYPES } from '../problems/problem-details';

export const TENANT_DELETION_PROBLEM_TYPES = {
  deploymentsLive: 'urn:weir:problem:tenant-has-live-deployments',
  beingDeleted: 'urn:weir:problem:tenant-being-deleted',
} as const;

/** A deployment that keeps its tenant from being deleted, as the 409 names it. */
export interface LiveDeployment {
  readonly id: string;
  readonly status: string;
  readonly desiredState: string;
  readonly openRun: boolean;
}

/**
 * DELETE /v1/tenants/{id} while a deployment of the tenant could still run. Nothing was changed: the admin (or the
 * tenant) cancels or suspends each one named, waits for it to stop, and deletes again.
 */
export class TenantHasLiveDeploymentsProblem extends ProblemException {
  override readonly name = 'TenantHasLiveDeploymentsProblem';
  constructor(tenantId: string, live: readonly LiveDeployment[]) {
    const each = live.map((d) => `${d.id} (status ${d.status}, desired ${d.desiredState}${d.openRun ? ', a run still open' : ''})`);
    super(
      409,
      TENANT_DELETION_PROBLEM_TYPES.deploymentsLive,
      'Conflict',
      `Tenant ${tenantId} still has deployments that could be running: ${each.join('; ')}. ` +
        'Cancel or suspend them, wait until each is CANCELLED, SUSPENDED, FAILED or FINISHED, then delete the tenant again.',
    );
  }
}

/** A create (a key, a deployment, a bundle) for a tenant whose deletion has begun. */
export class TenantBeingDeletedProblem extends ProblemException {
  override readonly name = 'TenantBeingDeletedProblem';
  constructor(tenantId: string) {
    super(409, TENANT_DELETION_PROBLEM_TYPES.beingDeleted, 'Conflict', `Tenant ${tenantId} is being deleted; nothing new can be created for it`);
  }
}

/** Object storage or Kafka failed part-way: the tenant stays marked with its keys revoked, and a DELETE resumes. */
export class TenantDeletionUnavailableProblem extends ProblemException {
  override readonly name = 'TenantDeletionUnavailableProblem';
  constructor(tenantId: string, dependency: 'Object storage' | 'Kafka') {
    super(
      503,
      PROBLEM_TYPES.unavailable,
      'Service Unavailable',
      `${dependency} is unavailable, so the deletion of tenant ${tenantId} stopped part-way. The tenant stays marked ` +
        'for deletion with every key revoked; send the DELETE again to finish it.',
    );
  }
}

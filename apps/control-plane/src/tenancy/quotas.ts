import { ProblemException } from '../problems/problem.exception';
import { AUTH_PROBLEM_TYPES } from './auth.problems';

/** What a tenant may use at most; read from its row in `tenants`. */
export interface TenantQuotas {
  readonly maxDeployments: number;
  readonly maxTotalParallelism: number;
  readonly maxBundleBytes: number;
}

/** What a tenant uses now: deployments not CANCELLED/FINISHED, and the sum of their parallelism. */
export interface DeploymentUsage {
  readonly deployments: number;
  readonly totalParallelism: number;
}

export type QuotaName = keyof TenantQuotas;

/** 4xx naming the quota, its limit and the current use, so the caller knows what to free or ask for. */
export class QuotaExceededProblem extends ProblemException {
  override readonly name = 'QuotaExceededProblem';
  constructor(
    readonly quota: QuotaName,
    readonly limit: number,
    readonly current: number,
    readonly requested: number,
    status = 409,
  ) {
    super(
      status,
      AUTH_PROBLEM_TYPES.quotaExceeded,
      'Quota exceeded',
      `Quota ${quota} exceeded: limit ${limit}, in use ${current}, requested ${requested}`,
    );
  }
}

export interface DeployRequest {
  /** Parallelism the new (or changed) deployment will use. */
  readonly parallelism: number;
  /** Parallelism the deployment held before (a rescale or upgrade of an existing one); 0 for a new one. */
  readonly releasedParallelism?: number;
  /** False for a change to an existing deployment (it is already counted). */
  readonly newDeployment?: boolean;
}

/** Pure check, so the same rule is applied wherever usage comes from. Throws QuotaExceededProblem (409). */
export function checkDeployQuota(quotas: TenantQuotas, usage: DeploymentUsage, request: DeployRequest): void {
  const newDeployment = request.newDeployment ?? true;
  if (newDeployment && usage.deployments + 1 > quotas.maxDeployments) {
    throw new QuotaExceededProblem('maxDeployments', quotas.maxDeployments, usage.deployments, 1);
  }
  const after = usage.totalParallelism - (request.releasedParallelism ?? 0) + request.parallelism;
  if (after > quotas.maxTotalParallelism) {
    throw new QuotaExceededProblem('maxTotalParallelism', quotas.maxTotalParallelism, usage.totalParallelism, request.parallelism);
  }
}

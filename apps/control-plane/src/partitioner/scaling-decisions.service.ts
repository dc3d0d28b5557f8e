import { Injectable } from '@nestjs/common';
import { DeploymentsRepository } from '../deployments/deployments.repository';
import { toPage, type Page } from '../pagination/cursor';
import { NotFoundProblem } from '../problems/problem.exception';
import { TenantDb } from '../tenancy/tenant-db';
import type { ScalingDecision } from './scaling-decision';
import { ScalingDecisionsRepository } from './scaling-decisions.repository';
import { pagesByDeployment } from '../pagination/newest-per-deployment';

/** A deployment's scaling decisions as tenants read them (REST and GraphQL), scoped to the caller's tenant by RLS. */
@Injectable()
export class ScalingDecisionsService {
  constructor(
    private readonly db: TenantDb,
    private readonly decisions: ScalingDecisionsRepository,
    private readonly deployments: DeploymentsRepository,
  ) {}

  async list(tenantId: string, deploymentId: string, limit: number, beforeId: string | undefined): Promise<Page<ScalingDecision>> {
    return this.db.run(tenantId, async (client) => {
      if (!(await this.deployments.find(client, deploymentId))) throw new NotFoundProblem('deployment', deploymentId);
      return toPage(await this.decisions.list(client, deploymentId, limit + 1, beforeId), limit, (d) => d.decisionId);
    });
  }

  /** `list` of each deployment, in one transaction; a deployment the tenant does not have is absent. */
  async listByDeployment(tenantId: string, deploymentIds: readonly string[], limit: number, beforeId: string | undefined): Promise<Map<string, Page<ScalingDecision>>> {
    return this.db.run(tenantId, async (client) => {
      const [found, decisions] = await Promise.all([
        this.deployments.existing(client, deploymentIds),
        this.decisions.listByDeployment(client, deploymentIds, limit + 1, beforeId),
      ]);
      return pagesByDeployment(found, decisions, limit, (d) => d.decisionId);
    });
  }

  async get(tenantId: string, deploymentId: string, decisionId: string): Promise<ScalingDecision> {
    const decision = await this.db.readWith(tenantId, (client) => this.decisions.find(client, deploymentId, decisionId));
    if (decision) return decision;
    // One statement per read: a second one says which of the two is missing.
    const deployment = await this.db.readWith(tenantId, (client) => this.deployments.find(client, deploymentId));
    throw deployment ? new NotFoundProblem('scaling decision', decisionId) : new NotFoundProblem('deployment', deploymentId);
  }
}

import { Injectable } from '@nestjs/common';
import type { SqlClient } from '@weir/db';
import type { Deployment } from '../deployments/deployment';
import { DeploymentConflictProblem } from '../deployments/deployment.problems';
import { DeploymentsRepository } from '../deployments/deployments.repository';
import { toPage, type Page } from '../pagination/cursor';
import { NotFoundProblem } from '../problems/problem.exception';
import type { ScalingPolicyChange, ScalingPolicyPatch, ScalingPolicyView } from '../scaling/scaling-policy';
import { ScalingPolicyRepository } from '../scaling/scaling-policy.repository';
import { ScalingPolicyWriter } from '../scaling/scaling-policy.writer';
import type { Principal } from '../tenancy/principal';
import { TenantDb } from '../tenancy/tenant-db';
import { pagesByDeployment } from '../pagination/newest-per-deployment';

/** A deployment's scaling policy as tenants read and change it (REST and GraphQL), scoped to the caller's tenant by RLS. */
@Injectable()
export class ScalingPolicyService {
  constructor(
    private readonly db: TenantDb,
    private readonly deployments: DeploymentsRepository,
    private readonly writer: ScalingPolicyWriter,
    private readonly policies: ScalingPolicyRepository,
  ) {}

  get(tenantId: string, deploymentId: string): Promise<ScalingPolicyView> {
    return this.db.run(tenantId, async (client) => this.writer.read(client, await this.mustFind(client, deploymentId)));
  }

  /** `get` of each deployment, in one transaction of three reads; a deployment the tenant does not have is absent. */
  getByDeployment(tenantId: string, deploymentIds: readonly string[]): Promise<Map<string, ScalingPolicyView>> {
    return this.db.run(tenantId, async (client) => {
      const views = await this.writer.readMany(client, await this.deployments.findMany(client, deploymentIds));
      return new Map(views.map((v) => [v.deploymentId, v]));
    });
  }

  /**
   * Merges the change in, under the deployment's row lock (a controller's look holds it too: the change lands between
   * two looks, never inside one). A cancelled deployment's policy is a 409, as PATCH /v1/deployments is.
   */
  async patch(principal: Principal, deploymentId: string, patch: ScalingPolicyPatch): Promise<ScalingPolicyView> {
    // The controllers' loops scan every second and find the deployment due (the change makes it so): nothing to kick.
    return this.db.run(principal.tenantId, async (client) => {
      const current = await this.mustFind(client, deploymentId, true);
      if (current.desiredState === 'CANCELLED') throw new DeploymentConflictProblem(`deployment ${current.id} is cancelled; create a new one`);
      return (await this.writer.change(client, current, patch, principal.keyId)).view;
    });
  }

  async changes(tenantId: string, deploymentId: string, limit: number, beforeId: string | undefined): Promise<Page<ScalingPolicyChange>> {
    return this.db.run(tenantId, async (client) => {
      await this.mustFind(client, deploymentId);
      return toPage(await this.policies.changes(client, deploymentId, limit + 1, beforeId), limit, (c) => c.changeId);
    });
  }

  /** `changes` of each deployment, in one transaction; a deployment the tenant does not have is absent. */
  async changesByDeployment(tenantId: string, deploymentIds: readonly string[], limit: number, beforeId: string | undefined): Promise<Map<string, Page<ScalingPolicyChange>>> {
    return this.db.run(tenantId, async (client) => {
      const [found, changes] = await Promise.all([
        this.deployments.existing(client, deploymentIds),
        this.policies.changesByDeployment(client, deploymentIds, limit + 1, beforeId),
      ]);
      return pagesByDeployment(found, changes, limit, (c) => c.changeId);
    });
  }

  private async mustFind(client: SqlClient, id: string, lock = false): Promise<Deployment> {
    const d = await this.deployments.find(client, id, { lock });
    if (!d) throw new NotFoundProblem('deployment', id);
    return d;
  }
}

import { Injectable } from '@nestjs/common';
import type { PoolClient } from '@weir/db';
import { BundleReader, type DeployableBundle } from '../deployments/bundle-reader';
import type { Deployment } from '../deployments/deployment';
import { DeploymentsRepository } from '../deployments/deployments.repository';
import { InvalidRequestProblem } from '../problems/problem.exception';
import { changedFields, mergePolicy, policyViewOf, policyViolations, storedOf, type ScalingPolicyChange, type ScalingPolicyPatch, type ScalingPolicyView } from './scaling-policy';
import { ScalingPolicyRepository } from './scaling-policy.repository';

/**
 * Reads and changes a deployment's scaling policy inside the caller's tenant transaction: the one path every change
 * takes (PATCH …/scaling-policy, GraphQL, and PATCH /v1/deployments {partitionerMode, autoscalerMode}), so each is
 * validated against the bundle, stored, recorded (who, when, before → after) and makes both controllers look at once.
 */
@Injectable()
export class ScalingPolicyWriter {
  constructor(
    private readonly policies: ScalingPolicyRepository,
    private readonly deployments: DeploymentsRepository,
    private readonly bundles: BundleReader,
  ) {}

  async read(client: PoolClient, deployment: Deployment): Promise<ScalingPolicyView> {
    return policyViewOf(deployment, await this.maxParallelismOf(client, deployment), await this.policies.find(client, deployment.id));
  }

  /** `read` of each deployment, with one statement for their bundles and one for their stored policies (sent together). */
  async readMany(client: PoolClient, deployments: readonly Deployment[]): Promise<ScalingPolicyView[]> {
    if (deployments.length === 0) return [];
    const [bundles, stored] = await Promise.all([
      this.bundles.byIds(client, [...new Set(deployments.map((d) => d.bundleId))]),
      this.policies.findByDeployment(client, deployments.map((d) => d.id)),
    ]);
    return deployments.map((d) => policyViewOf(d, maxParallelismIn(bundles.get(d.bundleId), d), stored.get(d.id) ?? null));
  }

  /**
   * Merges `patch` into the policy of `deployment` (whose row the caller holds locked); a 400 naming each field out of
   * range. Nothing is written when nothing changes (`change` null).
   */
  async change(client: PoolClient, deployment: Deployment, patch: ScalingPolicyPatch, by: string): Promise<{ view: ScalingPolicyView; change: ScalingPolicyChange | null }> {
    const maxParallelism = await this.maxParallelismOf(client, deployment);
    const before = policyViewOf(deployment, maxParallelism, await this.policies.find(client, deployment.id));
    const after = mergePolicy(before.policy, patch);
    const errors = policyViolations(after, maxParallelism);
    if (errors.length) throw new InvalidRequestProblem(errors);
    const fields = changedFields(before.policy, after);
    if (!fields.length) return { view: before, change: null };
    const row = await this.policies.upsert(client, deployment.tenantId, deployment.id, storedOf(after), by);
    if (after.partitioner.mode !== before.policy.partitioner.mode) await this.deployments.setPartitionerMode(client, deployment.id, after.partitioner.mode);
    if (after.autoscaler.mode !== before.policy.autoscaler.mode) await this.deployments.setAutoscalerMode(client, deployment.id, after.autoscaler.mode);
    await this.policies.makeDue(client, deployment.id);
    const change = await this.policies.recordChange(client, deployment.tenantId, { deploymentId: deployment.id, changedBy: by, from: before.policy, to: after, fields });
    const changed = { ...deployment, partitionerMode: after.partitioner.mode, autoscalerMode: after.autoscaler.mode };
    return { view: policyViewOf(changed, maxParallelism, row), change };
  }

  private async maxParallelismOf(client: PoolClient, deployment: Deployment): Promise<number> {
    return maxParallelismIn(await this.bundles.byId(client, deployment.bundleId), deployment);
  }
}

function maxParallelismIn(bundle: DeployableBundle | null | undefined, deployment: Deployment): number {
  if (!bundle) throw new Error(`bundle ${deployment.bundleId} of deployment ${deployment.id} is missing (bundles in use cannot be deleted)`);
  return bundle.maxParallelism;
}

import { Args, ID, Int, Mutation, Parent, ResolveField, Resolver } from '@nestjs/graphql';
import { deploymentIdParams } from '../../deployments/dto/deployment-input';
import { scalingPolicyPatchBody } from '../../scaling-policy/scaling-policy.dto';
import { ScalingPolicyService } from '../../scaling-policy/scaling-policy.service';
import type { Principal } from '../../tenancy';
import { Caller } from '../graphql-auth';
import { pageArgsSchema, parseArgs } from '../graphql-args';
import { Loaders, type RequestLoaders } from '../loaders/request-loaders';
import { DeploymentModel } from '../models/deployment.model';
import { ScalingPolicyChangeModel, ScalingPolicyChangePage, ScalingPolicyInput, ScalingPolicyModel } from '../models/scaling-policy.model';

/** The scaling policy over GraphQL: the same service, validation and tenant scoping as /v1/deployments/{id}/scaling-policy. */
@Resolver(() => DeploymentModel)
export class ScalingPolicyResolver {
  constructor(private readonly policies: ScalingPolicyService) {}

  @ResolveField(() => ScalingPolicyModel, { description: "What the partitioner and the autoscaler may do and how eagerly; set it with setDeploymentScalingPolicy." })
  async scalingPolicy(@Caller('read') principal: Principal, @Parent() deployment: DeploymentModel, @Loaders() loaders: RequestLoaders): Promise<ScalingPolicyModel> {
    return ScalingPolicyModel.fromView(await loaders.scalingPolicy.load({ tenantId: principal.tenantId, deploymentId: deployment.id }));
  }

  @ResolveField(() => ScalingPolicyChangePage, { description: "The scaling policy's changes, newest first." })
  async scalingPolicyChanges(
    @Caller('read') principal: Principal,
    @Parent() deployment: DeploymentModel,
    @Loaders() loaders: RequestLoaders,
    @Args('limit', { type: () => Int, nullable: true, description: '1-200, default 50' }) limit?: number,
    @Args('cursor', { type: () => String, nullable: true }) cursor?: string,
  ): Promise<ScalingPolicyChangePage> {
    const args = parseArgs(pageArgsSchema, { limit, cursor });
    const page = await loaders.scalingPolicyChanges.load({ tenantId: principal.tenantId, deploymentId: deployment.id, limit: args.limit, cursor: args.cursor });
    return { items: page.items.map(ScalingPolicyChangeModel.from), nextCursor: page.nextCursor };
  }

  @Mutation(() => ScalingPolicyModel, {
    description: 'Change fields of the scaling policy (write scope); as PATCH /v1/deployments/{id}/scaling-policy: the fields given change, the others stay, and it takes effect at the next look.',
  })
  async setDeploymentScalingPolicy(
    @Caller('write') principal: Principal,
    @Args('id', { type: () => ID }) id: string,
    @Args('policy', { type: () => ScalingPolicyInput }) policy: ScalingPolicyInput,
  ): Promise<ScalingPolicyModel> {
    const { id: deploymentId } = parseArgs(deploymentIdParams, { id });
    const body = parseArgs(scalingPolicyPatchBody, { ...part('partitioner', policy.partitioner), ...part('autoscaler', policy.autoscaler) });
    return ScalingPolicyModel.fromView(await this.policies.patch(principal, deploymentId, body));
  }
}

/** An input object without its nulls (GraphQL's "not given"), under its name; nothing when absent. */
function part(name: string, input: object | null | undefined): Record<string, Record<string, unknown>> {
  if (!input) return {};
  return { [name]: Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null && v !== undefined)) };
}

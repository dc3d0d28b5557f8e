import { Args, ID, Int, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { z } from 'zod';
import { deploymentIdParams } from '../../deployments/dto/deployment-input';
import { DECISION_ID_PATTERN } from '../../partitioner/scaling-decision';
import { toDecisionMessage } from '../../partitioner/scaling-decision-events';
import { ScalingDecisionsService } from '../../partitioner/scaling-decisions.service';
import type { Principal } from '../../tenancy';
import { Caller } from '../graphql-auth';
import { pageArgsSchema, parseArgs } from '../graphql-args';
import { Loaders, type RequestLoaders } from '../loaders/request-loaders';
import { DeploymentModel } from '../models/deployment.model';
import { ScalingDecisionModel, ScalingDecisionPage } from '../models/events.model';

const decisionArgs = deploymentIdParams.extend({ decisionId: z.string().regex(DECISION_ID_PATTERN, 'must be a scaling decision id (s followed by 24 hex digits)') });

/** Scaling decisions over GraphQL: the same service and tenant scoping as /v1/deployments/{id}/scaling-decisions. */
@Resolver(() => DeploymentModel)
export class ScalingDecisionsResolver {
  constructor(private readonly decisions: ScalingDecisionsService) {}

  @ResolveField(() => ScalingDecisionPage, { description: "The partitioner's and the autoscaler's decisions on the deployment, newest first; subscribe to scalingDecisions for pushes." })
  async scalingDecisions(
    @Caller('read') principal: Principal,
    @Parent() deployment: DeploymentModel,
    @Loaders() loaders: RequestLoaders,
    @Args('limit', { type: () => Int, nullable: true, description: '1-200, default 50' }) limit?: number,
    @Args('cursor', { type: () => String, nullable: true }) cursor?: string,
  ): Promise<ScalingDecisionPage> {
    const args = parseArgs(pageArgsSchema, { limit, cursor });
    const page = await loaders.scalingDecisions.load({ tenantId: principal.tenantId, deploymentId: deployment.id, limit: args.limit, cursor: args.cursor });
    return { items: page.items.map((d) => ScalingDecisionModel.from(toDecisionMessage(d))), nextCursor: page.nextCursor };
  }

  @Query(() => ScalingDecisionModel, { description: 'One scaling decision of a deployment; NOT_FOUND if the tenant has none with these ids.' })
  async scalingDecision(
    @Caller('read') principal: Principal,
    @Args('deploymentId', { type: () => ID }) deploymentId: string,
    @Args('decisionId', { type: () => ID }) decisionId: string,
  ): Promise<ScalingDecisionModel> {
    const args = parseArgs(decisionArgs, { id: deploymentId, decisionId });
    return ScalingDecisionModel.from(toDecisionMessage(await this.decisions.get(principal.tenantId, args.id, args.decisionId)));
  }
}

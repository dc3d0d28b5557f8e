import { Args, ID, Int, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { z } from 'zod';
import { deploymentIdParams } from '../../deployments/dto/deployment-input';
import { MOVE_ID_PATTERN } from '../../moves/key-group-move';
import { KeyGroupMovesService } from '../../moves/key-group-moves.service';
import type { Principal } from '../../tenancy';
import { Caller } from '../graphql-auth';
import { pageArgsSchema, parseArgs } from '../graphql-args';
import { Loaders, type RequestLoaders } from '../loaders/request-loaders';
import { DeploymentModel } from '../models/deployment.model';
import { KeyGroupMoveModel, KeyGroupMovePage } from '../models/key-group-move.model';

const moveArgs = deploymentIdParams.extend({ moveId: z.string().regex(MOVE_ID_PATTERN, 'must be a key-group move id (m followed by 24 hex digits)') });

/** Key-group moves over GraphQL: the same service and tenant scoping as /v1/deployments/{id}/key-group-moves. */
@Resolver(() => DeploymentModel)
export class KeyGroupMovesResolver {
  constructor(private readonly moves: KeyGroupMovesService) {}

  @ResolveField(() => KeyGroupMovePage, { description: "The deployment's key-group moves, newest first; subscribe to keyGroupMoves for pushes." })
  async keyGroupMoves(
    @Caller('read') principal: Principal,
    @Parent() deployment: DeploymentModel,
    @Loaders() loaders: RequestLoaders,
    @Args('limit', { type: () => Int, nullable: true, description: '1-200, default 50' }) limit?: number,
    @Args('cursor', { type: () => String, nullable: true }) cursor?: string,
  ): Promise<KeyGroupMovePage> {
    const args = parseArgs(pageArgsSchema, { limit, cursor });
    const page = await loaders.keyGroupMoves.load({ tenantId: principal.tenantId, deploymentId: deployment.id, limit: args.limit, cursor: args.cursor });
    return { items: page.items.map(KeyGroupMoveModel.from), nextCursor: page.nextCursor };
  }

  @Query(() => KeyGroupMoveModel, { description: 'One key-group move of a deployment; NOT_FOUND if the tenant has none with these ids.' })
  async keyGroupMove(
    @Caller('read') principal: Principal,
    @Args('deploymentId', { type: () => ID }) deploymentId: string,
    @Args('moveId', { type: () => ID }) moveId: string,
  ): Promise<KeyGroupMoveModel> {
    const args = parseArgs(moveArgs, { id: deploymentId, moveId });
    return KeyGroupMoveModel.from(await this.moves.get(principal.tenantId, args.id, args.moveId));
  }
}

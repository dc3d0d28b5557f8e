import { Args, ID, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import { BundlesService } from '../../bundles';
import { bundleIdParamsSchema, decodeBundleKey, listBundlesQuerySchema } from '../../bundles/dto/bundle.input';
import { InvalidRequestProblem } from '../../problems/problem.exception';
import type { Principal } from '../../tenancy';
import { Caller } from '../graphql-auth';
import { pageArgsSchema, parseArgs } from '../graphql-args';
import { BundleModel, BundlePage } from '../models/bundle.model';

const listArgs = pageArgsSchema.extend({ name: listBundlesQuerySchema.shape.name.nullish().transform((n) => n ?? undefined) });

/** Bundles over GraphQL (read and delete; uploads are multipart, REST only), through BundlesService under RLS. */
@Resolver(() => BundleModel)
export class BundlesResolver {
  constructor(private readonly service: BundlesService) {}

  @Query(() => BundlePage, { description: "The tenant's bundle versions, by name then version." })
  async bundles(
    @Caller('read') principal: Principal,
    @Args('name', { type: () => String, nullable: true, description: 'Only versions of this bundle' }) name?: string,
    @Args('limit', { type: () => Int, nullable: true, description: '1-200, default 50' }) limit?: number,
    @Args('cursor', { type: () => String, nullable: true }) cursor?: string,
  ): Promise<BundlePage> {
    const args = parseArgs(listArgs, { name, limit, cursor });
    const after = decodeBundleKey(args.cursor);
    if (args.cursor !== undefined && after === undefined) {
      throw new InvalidRequestProblem([{ in: 'query', name: 'cursor', reason: 'is not a cursor returned by this API' }]);
    }
    const page = await this.service.list(principal.tenantId, args.limit, after, args.name);
    return { items: page.items.map(BundleModel.from), nextCursor: page.nextCursor };
  }

  @Query(() => BundleModel, { description: 'One bundle version; NOT_FOUND if the tenant has none with this id.' })
  async bundle(@Caller('read') principal: Principal, @Args('id', { type: () => ID }) id: string): Promise<BundleModel> {
    return BundleModel.from(await this.service.get(principal.tenantId, parseArgs(bundleIdParamsSchema, { id }).id));
  }

  @Mutation(() => Boolean, { description: 'Delete a bundle version (write scope); refused while a deployment uses it.' })
  async deleteBundle(@Caller('write') principal: Principal, @Args('id', { type: () => ID }) id: string): Promise<boolean> {
    await this.service.delete(principal.tenantId, parseArgs(bundleIdParamsSchema, { id }).id);
    return true;
  }
}

import { Args, ID, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import { createSloSchema, resourceIdSchema } from '../../slos/dto/slo.schemas';
import { SlosService } from '../../slos/slos.service';
import type { Principal } from '../../tenancy';
import { Caller } from '../graphql-auth';
import { pageArgsSchema, parseArgs, parseId } from '../graphql-args';
import { CreateSloInputModel, SloEventModel, SloModel, SloPage } from '../models/slo.model';

const listArgs = pageArgsSchema.extend({ deploymentId: resourceIdSchema.nullish().transform((v) => v ?? undefined) });

/** Latency SLOs over GraphQL: the same service, validation and tenant scoping as /v1/slos. */
@Resolver(() => SloModel)
export class SlosResolver {
  constructor(private readonly service: SlosService) {}

  @Query(() => SloPage, { description: "The tenant's SLOs in id order, optionally of one deployment." })
  async slos(
    @Caller('read') principal: Principal,
    @Args('deploymentId', { type: () => ID, nullable: true }) deploymentId?: string,
    @Args('limit', { type: () => Int, nullable: true, description: '1-200, default 50' }) limit?: number,
    @Args('cursor', { type: () => String, nullable: true }) cursor?: string,
  ): Promise<SloPage> {
    const args = parseArgs(listArgs, { deploymentId, limit, cursor });
    const page = await this.service.list(principal.tenantId, args.limit, args.cursor, args.deploymentId);
    return { items: page.items.map(SloModel.from), nextCursor: page.nextCursor };
  }

  @Query(() => SloModel, { description: 'One SLO with its current status; NOT_FOUND if the tenant has none with this id.' })
  async slo(@Caller('read') principal: Principal, @Args('id', { type: () => ID }) id: string): Promise<SloModel> {
    return SloModel.from(await this.service.get(principal.tenantId, parseId('id', id)));
  }

  @Query(() => [SloEventModel], { description: "An SLO's breaches and recoveries, oldest first (at most `limit`)." })
  async sloEvents(
    @Caller('read') principal: Principal,
    @Args('sloId', { type: () => ID }) sloId: string,
    @Args('limit', { type: () => Int, nullable: true, description: '1-200, default 50' }) limit?: number,
  ): Promise<SloEventModel[]> {
    const args = parseArgs(pageArgsSchema.extend({ sloId: resourceIdSchema }), { sloId, limit });
    return (await this.service.events(principal.tenantId, args.sloId, args.limit, undefined)).items.map(SloEventModel.from);
  }

  @Mutation(() => SloModel, { description: 'Create a latency SLO (write scope).' })
  async createSlo(@Caller('write') principal: Principal, @Args('input') input: CreateSloInputModel): Promise<SloModel> {
    const parsed = parseArgs(createSloSchema, stripNulls(input));
    return SloModel.from(await this.service.create(principal.tenantId, parsed));
  }

  @Mutation(() => Boolean, { description: 'Delete an SLO and its events (write scope); NOT_FOUND if it does not exist.' })
  async deleteSlo(@Caller('write') principal: Principal, @Args('id', { type: () => ID }) id: string): Promise<boolean> {
    await this.service.delete(principal.tenantId, parseId('id', id));
    return true;
  }
}

/** GraphQL passes omitted optional input fields as absent, explicit nulls as null: both mean "the default". */
function stripNulls(input: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries({ ...input }).filter(([, v]) => v !== null && v !== undefined));
}

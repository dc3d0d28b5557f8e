import { Query, Resolver } from '@nestjs/graphql';
import { TenantsService, type Principal } from '../../tenancy';
import { Caller } from '../graphql-auth';
import { TenantModel } from '../models/tenant.model';

@Resolver(() => TenantModel)
export class TenantResolver {
  constructor(private readonly tenants: TenantsService) {}

  @Query(() => TenantModel, { description: "The caller's tenant (the one its API key belongs to)." })
  async tenant(@Caller('read') principal: Principal): Promise<TenantModel> {
    return TenantModel.from(await this.tenants.get(principal.tenantId));
  }
}

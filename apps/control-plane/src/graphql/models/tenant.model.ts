import { Field, Float, ID, Int, ObjectType } from '@nestjs/graphql';
import type { Tenant } from '../../tenancy';

@ObjectType('TenantQuotas')
export class TenantQuotasModel {
  @Field(() => Int) maxDeployments!: number;
  @Field(() => Int) maxTotalParallelism!: number;
  @Field(() => Float) maxBundleBytes!: number;
}

@ObjectType('Tenant', { description: 'The tenant the API key belongs to.' })
export class TenantModel {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => TenantQuotasModel) quotas!: TenantQuotasModel;
  @Field() createdAt!: Date;

  static from(t: Tenant): TenantModel {
    return { id: t.id, name: t.name, quotas: { ...t.quotas }, createdAt: t.createdAt };
  }
}

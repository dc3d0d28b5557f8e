import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { SCOPES } from '../principal';
import type { CreatedApiKey } from '../api-keys.service';
import type { ApiKey, Tenant } from '../tenant';

export class TenantQuotasDto {
  @ApiProperty({ description: 'Deployments not cancelled or finished', example: 20 }) maxDeployments!: number;
  @ApiProperty({ description: 'Sum of the parallelism of those deployments', example: 64 }) maxTotalParallelism!: number;
  @ApiProperty({ description: 'Largest bundle upload, in bytes', example: 52428800 }) maxBundleBytes!: number;
}

export class TenantQuotasInputDto {
  @ApiPropertyOptional({ minimum: 0, maximum: 100000, default: 20 }) maxDeployments?: number;
  @ApiPropertyOptional({ minimum: 0, maximum: 1000000, default: 64 }) maxTotalParallelism?: number;
  @ApiPropertyOptional({ minimum: 1, maximum: 5368709120, default: 52428800 }) maxBundleBytes?: number;
}

export class CreateTenantDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Acme payments' }) name!: string;
  @ApiPropertyOptional({ type: TenantQuotasInputDto }) quotas?: TenantQuotasInputDto;
}

/** No defaults here: a quota left out of a patch keeps its current value. */
export class TenantQuotasPatchDto {
  @ApiPropertyOptional({ minimum: 0, maximum: 100000 }) maxDeployments?: number;
  @ApiPropertyOptional({ minimum: 0, maximum: 1000000 }) maxTotalParallelism?: number;
  @ApiPropertyOptional({ minimum: 1, maximum: 5368709120 }) maxBundleBytes?: number;
}

export class PatchTenantDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200, example: 'Acme payments' }) name?: string;
  @ApiPropertyOptional({ type: TenantQuotasPatchDto, description: 'At least one quota when given' }) quotas?: TenantQuotasPatchDto;
}

export class TenantDto {
  @ApiProperty({ example: 't0a1b2c3d4e5f6a7b8c9d' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ type: TenantQuotasDto }) quotas!: TenantQuotasDto;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'When a DELETE of this tenant began; null for a live tenant. A tenant being deleted has every key revoked and ' +
      'refuses creates; DELETE it again to finish a deletion that stopped part-way (503).',
  })
  deletingSince!: string | null;

  static from(tenant: Tenant): TenantDto {
    return {
      id: tenant.id,
      name: tenant.name,
      quotas: { ...tenant.quotas },
      createdAt: tenant.createdAt.toISOString(),
      deletingSince: tenant.deletingSince ? tenant.deletingSince.toISOString() : null,
    };
  }
}

export class TenantPageDto {
  @ApiProperty({ type: [TenantDto] }) items!: TenantDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  nextCursor!: string | null;
}

export class CreateApiKeyDto {
  @ApiProperty({ minLength: 1, maxLength: 100, example: 'ci deploys' }) name!: string;
  @ApiProperty({ enum: SCOPES, description: 'read: GET only; rules: read, and change rules (apply, roll back, shadow) only; write: everything' }) scope!: string;
}

export class ApiKeyDto {
  @ApiProperty({ example: '5f0c6a1d9e2b7c4a8d3e1f60' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: SCOPES }) scope!: string;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) revokedAt!: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'When the key last authenticated a request (REST or GraphQL); null if it has not since Weir began recording uses. ' +
      'Approximate: each control-plane instance notes uses in memory and writes them every 60 s, so this can be up to ' +
      'about a minute late (a use in the last moments before an instance stops can be missed).',
  })
  lastUsedAt!: string | null;

  static from(key: ApiKey): ApiKeyDto {
    return {
      id: key.id,
      name: key.name,
      scope: key.scope,
      createdAt: key.createdAt.toISOString(),
      revokedAt: key.revokedAt ? key.revokedAt.toISOString() : null,
      lastUsedAt: key.lastUsedAt ? key.lastUsedAt.toISOString() : null,
    };
  }
}

export class CreatedApiKeyDto extends ApiKeyDto {
  @ApiProperty({
    description: 'The API key, `weir_<id>_<secret>`. Shown in this response only: Weir stores a hash of the secret.',
    example: 'weir_5f0c6a1d9e2b7c4a8d3e1f60_q3T9…',
  })
  key!: string;

  static fromCreated(created: CreatedApiKey): CreatedApiKeyDto {
    return { ...ApiKeyDto.from(created.key), key: created.token };
  }
}

export class ApiKeyPageDto {
  @ApiProperty({ type: [ApiKeyDto] }) items!: ApiKeyDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  nextCursor!: string | null;
}

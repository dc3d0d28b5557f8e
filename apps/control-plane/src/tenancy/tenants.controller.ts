import { Body, Controller, Get, Param, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { ApiProblemResponse } from '../problems/api-problem-response.decorator';
import { parseInput } from '../validation/parse-input';
import { ApiAdminAuth, ApiTenantAuth } from './api-docs.decorators';
import { ApiKeysService } from './api-keys.service';
import { AdminOnly, CurrentPrincipal } from './auth.decorators';
import { CreateApiKeyDto, CreatedApiKeyDto, CreateTenantDto, TenantDto } from './dto/tenancy.dto';
import { createApiKeyBodySchema, createTenantBodySchema, tenantIdParamsSchema } from './dto/tenancy.input';
import type { Principal } from './principal';
import { TenantsService } from './tenants.service';

/** Bootstrap by the platform administrator: tenants, and a first key for each. */
@ApiTags('tenants')
@ApiProblemResponse(500, 'Unexpected failure; the detail is generic and the request id is logged')
@ApiProblemResponse(503, 'A dependency (Postgres) is unavailable; retry later')
@Controller('v1/tenants')
export class TenantsController {
  constructor(
    private readonly tenants: TenantsService,
    private readonly keys: ApiKeysService,
  ) {}

  @Post()
  @AdminOnly()
  @Idempotent()
  @ApiAdminAuth()
  @ApiOperation({ summary: 'Create a tenant (platform admin)' })
  @ApiBody({ type: CreateTenantDto })
  @ApiCreatedResponse({ type: TenantDto })
  @ApiProblemResponse(400, 'The body is invalid; the problem names the field')
  async create(@Body() body: unknown): Promise<TenantDto> {
    const input = parseInput(createTenantBodySchema, body ?? {}, 'body');
    return TenantDto.from(await this.tenants.create(input.name, input.quotas ?? {}));
  }

  @Post(':id/api-keys')
  @AdminOnly()
  @Idempotent()
  @ApiAdminAuth()
  @ApiOperation({ summary: "Create an API key for a tenant (platform admin bootstrap); its secret is shown once" })
  @ApiParam({ name: 'id', description: 'The tenant id' })
  @ApiBody({ type: CreateApiKeyDto })
  @ApiCreatedResponse({ type: CreatedApiKeyDto })
  @ApiProblemResponse(400, 'The body or the id is invalid; the problem names the field')
  @ApiProblemResponse(404, 'No tenant has this id')
  async createKey(@Param('id') id: string, @Body() body: unknown): Promise<CreatedApiKeyDto> {
    const params = parseInput(tenantIdParamsSchema, { id }, 'path');
    const input = parseInput(createApiKeyBodySchema, body ?? {}, 'body');
    return CreatedApiKeyDto.fromCreated(await this.keys.create(params.id, input.name, input.scope));
  }
}

/** The caller's own tenant: who it is and its quotas. */
@ApiTags('tenants')
@ApiTenantAuth()
@ApiProblemResponse(500, 'Unexpected failure; the detail is generic and the request id is logged')
@ApiProblemResponse(503, 'A dependency (Postgres) is unavailable; retry later')
@Controller('v1/tenant')
export class CurrentTenantController {
  constructor(private readonly tenants: TenantsService) {}

  @Get()
  @ApiOperation({ summary: "The caller's tenant and its quotas" })
  @ApiOkResponse({ type: TenantDto })
  async get(@CurrentPrincipal() principal: Principal): Promise<TenantDto> {
    return TenantDto.from(await this.tenants.get(principal.tenantId));
  }
}

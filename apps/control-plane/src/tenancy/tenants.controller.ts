import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../pagination/page-query';
import { ApiProblemResponse } from '../problems/api-problem-response.decorator';
import { parseInput } from '../validation/parse-input';
import { ApiTenantAuth } from './api-docs.decorators';
import { ApiKeysService } from './api-keys.service';
import { AdminOnly, CurrentPrincipal, RequireScope } from './auth.decorators';
import { CreateApiKeyDto, CreatedApiKeyDto, CreateTenantDto, PatchTenantDto, TenantDto, TenantPageDto } from './dto/tenancy.dto';
import { createApiKeyBodySchema, createTenantBodySchema, listTenantsQuerySchema, patchTenantBodySchema, tenantIdParamsSchema } from './dto/tenancy.input';
import type { Principal } from './principal';
import { TenantDeletionService } from './tenant-deletion.service';
import { TenantsService } from './tenants.service';

const ID_PARAM = { name: 'id', description: 'The tenant id' };

/**
 * Platform administration of tenants: bootstrap (a tenant and a first key for it), then listing, reading, changing
 * and deleting them. @AdminOnly() sits on the class, not on each handler: a route added here and left undecorated must not fall
 * back to a tenant key's scope check, since the list names every tenant.
 */
@AdminOnly()
@ApiTags('tenants')
@ApiProblemResponse(500, 'Unexpected failure; the detail is generic and the request id is logged')
@ApiProblemResponse(503, 'A dependency (Postgres) is unavailable; retry later')
@Controller('v1/tenants')
export class TenantsController {
  constructor(
    private readonly tenants: TenantsService,
    private readonly keys: ApiKeysService,
    private readonly deletion: TenantDeletionService,
  ) {}

  @Post()
  @Idempotent()
  @ApiOperation({ summary: 'Create a tenant (platform admin)' })
  @ApiBody({ type: CreateTenantDto })
  @ApiCreatedResponse({ type: TenantDto })
  @ApiProblemResponse(400, 'The body is invalid; the problem names the field')
  async create(@Body() body: unknown): Promise<TenantDto> {
    const input = parseInput(createTenantBodySchema, body ?? {}, 'body');
    return TenantDto.from(await this.tenants.create(input.name, input.quotas ?? {}));
  }

  @Get()
  @ApiOperation({ summary: 'List every tenant, in id order (platform admin)' })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE } })
  @ApiQuery({ name: 'cursor', required: false, description: 'nextCursor of the previous page' })
  @ApiOkResponse({ type: TenantPageDto })
  @ApiProblemResponse(400, 'A query parameter is invalid; the problem names it')
  async list(@Query() query: unknown): Promise<TenantPageDto> {
    const { limit, cursor } = parseInput(listTenantsQuerySchema, query, 'query');
    const page = await this.tenants.list(limit, cursor);
    return { items: page.items.map(TenantDto.from), nextCursor: page.nextCursor };
  }

  @Get(':id')
  @ApiOperation({ summary: 'One tenant and its quotas (platform admin)' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: TenantDto })
  @ApiProblemResponse(400, 'The id is not a tenant id')
  @ApiProblemResponse(404, 'No tenant has this id')
  async get(@Param('id') id: string): Promise<TenantDto> {
    const params = parseInput(tenantIdParamsSchema, { id }, 'path');
    return TenantDto.from(await this.tenants.get(params.id));
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Rename a tenant or change its quotas (platform admin)',
    description:
      'Only what the body names changes. A quota may be set below what the tenant uses now: that affects new requests only. ' +
      'Nothing running is stopped or scaled down and no stored bundle is removed, but the next deployment, rescale, upgrade or ' +
      'bundle upload that would exceed the new limit is refused (409, or 413 for a bundle). A patch and a concurrent quota ' +
      "check of the same tenant queue on the tenant's row, so a deploy is checked against the quotas before or after the patch.",
  })
  @ApiParam(ID_PARAM)
  @ApiBody({ type: PatchTenantDto })
  @ApiOkResponse({ type: TenantDto })
  @ApiProblemResponse(400, 'The body or the id is invalid, or the body changes nothing; the problem names the field')
  @ApiProblemResponse(404, 'No tenant has this id')
  async patch(@Param('id') id: string, @Body() body: unknown): Promise<TenantDto> {
    const params = parseInput(tenantIdParamsSchema, { id }, 'path');
    const input = parseInput(patchTenantBodySchema, body ?? {}, 'body');
    return TenantDto.from(await this.tenants.update(params.id, input));
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a tenant and everything it has (platform admin)',
    description:
      'Refused (409, naming each deployment) while any deployment of the tenant could run: every one must be CANCELLED, ' +
      'SUSPENDED, FAILED or FINISHED, with desired state other than RUNNING and no run open. Then, in order: the tenant is ' +
      'marked (deletingSince) and every API key revoked, at once on every instance; its S3 objects (tenants/{id}/) and ' +
      'Kafka topics (t.{id}. and its jobs\' weir.{id}.{deploymentId}.) are deleted; then every row it owns and the tenant ' +
      'itself. A failure part-way answers 503 (or 500) and leaves the tenant marked with its keys revoked; DELETE it again ' +
      'to finish. Another tenant\'s data is never touched.',
  })
  @ApiParam(ID_PARAM)
  @ApiNoContentResponse({ description: 'The tenant and everything it had are gone' })
  @ApiProblemResponse(400, 'The id is not a tenant id')
  @ApiProblemResponse(404, 'No tenant has this id (a deletion that completed answers this too)')
  @ApiProblemResponse(409, 'A deployment of the tenant could still be running; the problem names each, with its status')
  @ApiProblemResponse(503, 'Postgres, object storage or Kafka is unavailable; the tenant stays marked for deletion, retry the DELETE')
  async delete(@Param('id') id: string): Promise<void> {
    const params = parseInput(tenantIdParamsSchema, { id }, 'path');
    await this.deletion.delete(params.id);
  }

  @Post(':id/api-keys')
  @Idempotent()
  @ApiOperation({ summary: "Create an API key for a tenant (platform admin bootstrap); its secret is shown once" })
  @ApiParam(ID_PARAM)
  @ApiBody({ type: CreateApiKeyDto })
  @ApiCreatedResponse({ type: CreatedApiKeyDto })
  @ApiProblemResponse(400, 'The body or the id is invalid; the problem names the field')
  @ApiProblemResponse(404, 'No tenant has this id')
  @ApiProblemResponse(409, 'The tenant is being deleted')
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
  @RequireScope('read')
  @ApiOperation({ summary: "The caller's tenant and its quotas" })
  @ApiOkResponse({ type: TenantDto })
  async get(@CurrentPrincipal() principal: Principal): Promise<TenantDto> {
    return TenantDto.from(await this.tenants.get(principal.tenantId));
  }
}

import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../pagination/page-query';
import { ApiProblemResponse } from '../problems/api-problem-response.decorator';
import { parseInput } from '../validation/parse-input';
import { ApiTenantAuth } from './api-docs.decorators';
import { ApiKeysService } from './api-keys.service';
import { CurrentPrincipal, RequireScope } from './auth.decorators';
import { ApiKeyPageDto, ApiKeyDto, CreateApiKeyDto, CreatedApiKeyDto } from './dto/tenancy.dto';
import { apiKeyIdParamsSchema, createApiKeyBodySchema, listApiKeysQuerySchema } from './dto/tenancy.input';
import type { Principal } from './principal';

/** A tenant manages its own keys; every call needs a write key (keys are credentials, not data). */
@ApiTags('api-keys')
@ApiTenantAuth()
@ApiProblemResponse(500, 'Unexpected failure; the detail is generic and the request id is logged')
@ApiProblemResponse(503, 'A dependency (Postgres) is unavailable; retry later')
@Controller('v1/api-keys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @RequireScope('write')
  @Idempotent()
  @ApiOperation({ summary: 'Create an API key; the response is the only time its secret is shown' })
  @ApiBody({ type: CreateApiKeyDto })
  @ApiCreatedResponse({ type: CreatedApiKeyDto })
  @ApiProblemResponse(400, 'The body is invalid; the problem names the field')
  async create(@CurrentPrincipal() principal: Principal, @Body() body: unknown): Promise<CreatedApiKeyDto> {
    const input = parseInput(createApiKeyBodySchema, body ?? {}, 'body');
    return CreatedApiKeyDto.fromCreated(await this.keys.create(principal.tenantId, input.name, input.scope));
  }

  @Get()
  @RequireScope('write')
  @ApiOperation({ summary: "The tenant's API keys in id order, revoked ones included; never their secrets" })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE } })
  @ApiQuery({ name: 'cursor', required: false, description: 'nextCursor of the previous page' })
  @ApiOkResponse({ type: ApiKeyPageDto })
  @ApiProblemResponse(400, 'A query parameter is invalid; the problem names it')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: unknown): Promise<ApiKeyPageDto> {
    const { limit, cursor } = parseInput(listApiKeysQuerySchema, query, 'query');
    const page = await this.keys.list(principal.tenantId, limit, cursor);
    return { items: page.items.map(ApiKeyDto.from), nextCursor: page.nextCursor };
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScope('write')
  @ApiOperation({ summary: 'Revoke an API key: refused from the next request on (idempotent)' })
  @ApiParam({ name: 'id', description: 'The key id (the part after weir_)' })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiProblemResponse(400, 'The id is not an API key id')
  @ApiProblemResponse(404, 'The tenant has no key with this id')
  async revoke(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    const params = parseInput(apiKeyIdParamsSchema, { id }, 'path');
    await this.keys.revoke(principal.tenantId, params.id);
  }
}

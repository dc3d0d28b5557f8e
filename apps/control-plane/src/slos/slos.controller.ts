import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../pagination/page-query';
import { ApiProblemResponse } from '../problems/api-problem-response.decorator';
import { ApiTenantAuth, CurrentPrincipal, RequireScope, type Principal } from '../tenancy';
import { parseInput } from '../validation/parse-input';
import { CreateSloDto, SloDto, SloEventDto, SloEventPageDto, SloPageDto } from './dto/slo.dto';
import { createSloSchema, listSloEventsQuerySchema, listSlosQuerySchema, sloIdParamsSchema } from './dto/slo.schemas';
import { SlosService } from './slos.service';

@ApiTags('slos')
@ApiTenantAuth()
@ApiProblemResponse(500, 'Unexpected failure; the detail is generic and the request id is logged')
@ApiProblemResponse(503, 'A dependency (Postgres) is unavailable; retry later')
@Controller('v1/slos')
export class SlosController {
  constructor(private readonly slos: SlosService) {}

  @Post()
  @RequireScope('write')
  @ApiOperation({ summary: 'Create a latency SLO on a deployment (evaluated per minute over a window)' })
  @ApiBody({ type: CreateSloDto })
  @ApiCreatedResponse({ type: SloDto })
  @ApiProblemResponse(400, 'The body is invalid (each field is named) or the deployment does not exist')
  async create(@CurrentPrincipal() principal: Principal, @Body() body: unknown): Promise<SloDto> {
    const input = parseInput(createSloSchema, body ?? {}, 'body');
    return SloDto.from(await this.slos.create(principal.tenantId, input));
  }

  @Get()
  @RequireScope('read')
  @ApiOperation({ summary: "List the tenant's SLOs in id order, optionally of one deployment" })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE } })
  @ApiQuery({ name: 'cursor', required: false, description: 'nextCursor of the previous page' })
  @ApiQuery({ name: 'deploymentId', required: false })
  @ApiOkResponse({ type: SloPageDto })
  @ApiProblemResponse(400, 'A query parameter is invalid; the problem names it')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: unknown): Promise<SloPageDto> {
    const { limit, cursor, deploymentId } = parseInput(listSlosQuerySchema, query, 'query');
    const page = await this.slos.list(principal.tenantId, limit, cursor, deploymentId);
    return { items: page.items.map(SloDto.from), nextCursor: page.nextCursor };
  }

  @Get(':id')
  @RequireScope('read')
  @ApiOperation({ summary: 'One SLO with its current compliance and burn rate' })
  @ApiOkResponse({ type: SloDto })
  @ApiProblemResponse(404, 'No SLO of this tenant has this id')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<SloDto> {
    const params = parseInput(sloIdParamsSchema, { id }, 'path');
    return SloDto.from(await this.slos.get(principal.tenantId, params.id));
  }

  @Get(':id/events')
  @RequireScope('read')
  @ApiOperation({ summary: "The SLO's breaches and recoveries, oldest first" })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE } })
  @ApiQuery({ name: 'cursor', required: false, description: 'nextCursor of the previous page' })
  @ApiOkResponse({ type: SloEventPageDto })
  @ApiProblemResponse(404, 'No SLO of this tenant has this id')
  async events(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: unknown): Promise<SloEventPageDto> {
    const params = parseInput(sloIdParamsSchema, { id }, 'path');
    const { limit, cursor } = parseInput(listSloEventsQuerySchema, query, 'query');
    const page = await this.slos.events(principal.tenantId, params.id, limit, cursor);
    return { items: page.items.map(SloEventDto.from), nextCursor: page.nextCursor };
  }

  @Delete(':id')
  @RequireScope('write')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete an SLO and its events (the deployment’s recorded minutes stay)' })
  @ApiNoContentResponse()
  @ApiProblemResponse(404, 'No SLO of this tenant has this id')
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    const params = parseInput(sloIdParamsSchema, { id }, 'path');
    await this.slos.delete(principal.tenantId, params.id);
  }
}

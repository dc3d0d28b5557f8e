import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Idempotent } from '../idempotency';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../pagination/page-query';
import { ApiProblemResponse } from '../problems/api-problem-response.decorator';
import { ApiTenantAuth, CurrentPrincipal, RequireScope, type Principal } from '../tenancy';
import { parseInput } from '../validation/parse-input';
import { CreatedRuleSetVersionDto, CreateRuleSetDto, RollbackRulesDto, RolloutDto, RuleSetVersionDto, RuleSetVersionPageDto, ShadowResultsDto } from './dto/rules.dto';
import { deploymentParamsSchema, listVersionsQuerySchema, rollbackBodySchema, rolloutParamsSchema, shadowResultsQuerySchema, versionParamsSchema } from './dto/rules.input';
import { RulesService } from './rules.service';

/** A version is a positive integer, so `rollouts` (…/rules/rollouts/{rolloutId}) is never one. */
const VERSION_PARAM = { name: 'version', description: 'The rule-set version number', schema: { type: 'integer', minimum: 1 } } as const;

@ApiTags('rules')
@ApiTenantAuth()
@ApiProblemResponse(500, 'Unexpected failure; the detail is generic and the request id is logged')
@ApiProblemResponse(503, 'A dependency (Postgres, Kafka) is unavailable; retry later')
@Controller('v1/deployments/:id/rules')
export class RulesController {
  constructor(private readonly rules: RulesService) {}

  @Post()
  @RequireScope('rules')
  @Idempotent()
  @ApiOperation({ summary: 'Store a new rule-set version ({ "rules": [...] }) and roll it out to the running job' })
  @ApiBody({ type: CreateRuleSetDto })
  @ApiCreatedResponse({ type: CreatedRuleSetVersionDto })
  @ApiProblemResponse(400, 'A rule is invalid: each error names the field (rules[0].comparison) and the problem')
  @ApiProblemResponse(404, 'No deployment of this tenant has this id')
  async create(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: unknown): Promise<CreatedRuleSetVersionDto> {
    const params = parseInput(deploymentParamsSchema, { id }, 'path');
    const created = await this.rules.create(principal.tenantId, params.id, body);
    return { ...RuleSetVersionDto.from(created.version), rollout: RolloutDto.from(created.rollout) };
  }

  @Get()
  @RequireScope('read')
  @ApiOperation({ summary: "The deployment's rule-set versions, newest first" })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE } })
  @ApiQuery({ name: 'cursor', required: false, description: 'nextCursor of the previous page' })
  @ApiOkResponse({ type: RuleSetVersionPageDto })
  async list(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: unknown): Promise<RuleSetVersionPageDto> {
    const params = parseInput(deploymentParamsSchema, { id }, 'path');
    const { limit, cursor } = parseInput(listVersionsQuerySchema, query, 'query');
    const page = await this.rules.list(principal.tenantId, params.id, limit, cursor);
    return { items: page.items.map(RuleSetVersionDto.from), nextCursor: page.nextCursor };
  }

  @Post('rollback')
  @RequireScope('rules')
  @Idempotent()
  @HttpCode(201)
  @ApiOperation({ summary: 'Roll an earlier version out again ({ "toVersion": N }): a new rollout of its content' })
  @ApiBody({ type: RollbackRulesDto })
  @ApiCreatedResponse({ type: RolloutDto })
  @ApiProblemResponse(400, 'toVersion is missing or names no version of this deployment')
  async rollback(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: unknown): Promise<RolloutDto> {
    const params = parseInput(deploymentParamsSchema, { id }, 'path');
    const { toVersion } = parseInput(rollbackBodySchema, body ?? {}, 'body');
    return RolloutDto.from(await this.rules.rollback(principal.tenantId, params.id, toVersion));
  }

  @Get('rollouts/:rolloutId')
  @RequireScope('read')
  @ApiOperation({ summary: 'A rollout: per subtask the version it applies and from which rules-topic offset' })
  @ApiOkResponse({ type: RolloutDto })
  @ApiProblemResponse(404, 'No rollout of this deployment has this id')
  async rollout(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('rolloutId') rolloutId: string): Promise<RolloutDto> {
    const params = parseInput(rolloutParamsSchema, { id, rolloutId }, 'path');
    return RolloutDto.from(await this.rules.rollout(principal.tenantId, params.id, params.rolloutId));
  }

  @Post(':version/shadow')
  @ApiParam(VERSION_PARAM)
  @RequireScope('rules')
  @Idempotent()
  @HttpCode(201)
  @ApiOperation({ summary: 'Evaluate a version in shadow beside the active rules: its alerts go to the shadow output, not the alerts' })
  @ApiCreatedResponse({ type: RolloutDto })
  @ApiProblemResponse(404, 'The deployment has no such version')
  async shadow(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('version') version: string): Promise<RolloutDto> {
    const params = parseInput(versionParamsSchema, { id, version }, 'path');
    return RolloutDto.from(await this.rules.shadow(principal.tenantId, params.id, params.version));
  }

  @Get(':version/shadow-results')
  @ApiParam(VERSION_PARAM)
  @RequireScope('read')
  @ApiOperation({ summary: 'The alerts a version evaluated in shadow would have raised: counts per rule and the first `limit`' })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE } })
  @ApiOkResponse({ type: ShadowResultsDto })
  @ApiProblemResponse(404, 'The deployment has no such version')
  async shadowResults(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('version') version: string, @Query() query: unknown): Promise<ShadowResultsDto> {
    const params = parseInput(versionParamsSchema, { id, version }, 'path');
    const { limit } = parseInput(shadowResultsQuerySchema, query, 'query');
    const results = await this.rules.shadowResults(principal.tenantId, params.id, params.version, limit);
    return { ...results, alertsByRule: { ...results.alertsByRule }, alerts: [...results.alerts] };
  }

  @Get(':version')
  @ApiParam(VERSION_PARAM)
  @RequireScope('read')
  @ApiOperation({ summary: 'One rule-set version' })
  @ApiOkResponse({ type: RuleSetVersionDto })
  @ApiProblemResponse(404, 'The deployment has no such version')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('version') version: string): Promise<RuleSetVersionDto> {
    const params = parseInput(versionParamsSchema, { id, version }, 'path');
    return RuleSetVersionDto.from(await this.rules.get(principal.tenantId, params.id, params.version));
  }
}

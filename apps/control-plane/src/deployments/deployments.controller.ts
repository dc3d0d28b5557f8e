import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Idempotent } from '../idempotency';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../pagination/page-query';
import { ApiProblemResponse } from '../problems/api-problem-response.decorator';
import { ApiTenantAuth, CurrentPrincipal, RequireScope, type Principal } from '../tenancy';
import { parseInput } from '../validation/parse-input';
import { DEPLOYMENT_STATUSES } from './deployment';
import { DeploymentsService } from './deployments.service';
import { createDeploymentBody, deploymentIdParams, historyQuery, listDeploymentsQuery, patchDeploymentBody, upgradeDeploymentBody } from './dto/deployment-input';
import {
  CreateDeploymentRequestDto,
  DeploymentDto,
  DeploymentHistoryDto,
  DeploymentPageDto,
  PatchDeploymentRequestDto,
  RunDto,
  TransitionDto,
  UpgradeDeploymentRequestDto,
} from './dto/deployment.dto';

const ID_PARAM = { name: 'id', description: 'The deployment id' };

@ApiTags('deployments')
@ApiTenantAuth()
@ApiProblemResponse(500, 'Unexpected failure; the detail is generic and the request id is logged')
@ApiProblemResponse(503, 'A dependency (Postgres) is unavailable; retry later')
@Controller('v1/deployments')
export class DeploymentsController {
  constructor(private readonly deployments: DeploymentsService) {}

  @Post()
  @RequireScope('write')
  @Idempotent()
  @ApiOperation({ summary: 'Deploy a bundle version; it starts unless desiredState is SUSPENDED' })
  @ApiBody({ type: CreateDeploymentRequestDto })
  @ApiCreatedResponse({ type: DeploymentDto })
  @ApiProblemResponse(400, 'The body is invalid (or names an unknown bundle or operator, or a topic outside t.<tenantId>.); the problem names the field')
  @ApiProblemResponse(409, 'The name is taken by a deployment that is not cancelled, or a quota would be exceeded')
  async create(@CurrentPrincipal() principal: Principal, @Body() body: unknown): Promise<DeploymentDto> {
    const input = parseInput(createDeploymentBody, body ?? {}, 'body');
    return DeploymentDto.from(await this.deployments.create(principal, input));
  }

  @Get()
  @RequireScope('read')
  @ApiOperation({ summary: "List the tenant's deployments, oldest first" })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE } })
  @ApiQuery({ name: 'cursor', required: false, description: 'nextCursor of the previous page' })
  @ApiQuery({ name: 'status', required: false, enum: DEPLOYMENT_STATUSES })
  @ApiOkResponse({ type: DeploymentPageDto })
  @ApiProblemResponse(400, 'A query parameter is invalid; the problem names it')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: unknown): Promise<DeploymentPageDto> {
    const { limit, cursor, status } = parseInput(listDeploymentsQuery, query, 'query');
    const page = await this.deployments.list(principal.tenantId, limit, cursor, status);
    return { items: page.items.map(DeploymentDto.from), nextCursor: page.nextCursor };
  }

  @Get(':id')
  @RequireScope('read')
  @ApiOperation({ summary: 'One deployment: desired state, observed status and why' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: DeploymentDto })
  @ApiProblemResponse(400, 'The id is not a deployment id')
  @ApiProblemResponse(404, 'No deployment of this tenant has this id')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<DeploymentDto> {
    const params = parseInput(deploymentIdParams, { id }, 'path');
    return DeploymentDto.from(await this.deployments.get(principal.tenantId, params.id));
  }

  @Patch(':id')
  @RequireScope('write')
  @ApiOperation({ summary: 'Change the desired state (RUNNING, SUSPENDED, CANCELLED), the parallelism (→ RESCALING) or the partitioner mode' })
  @ApiParam(ID_PARAM)
  @ApiBody({ type: PatchDeploymentRequestDto })
  @ApiOkResponse({ type: DeploymentDto })
  @ApiProblemResponse(400, 'The body is invalid; the problem names the field')
  @ApiProblemResponse(404, 'No deployment of this tenant has this id')
  @ApiProblemResponse(409, 'The deployment is cancelled, or the parallelism quota would be exceeded')
  async patch(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: unknown): Promise<DeploymentDto> {
    const params = parseInput(deploymentIdParams, { id }, 'path');
    const input = parseInput(patchDeploymentBody, body ?? {}, 'body');
    return DeploymentDto.from(await this.deployments.patch(principal, params.id, input));
  }

  @Post(':id/upgrade')
  @RequireScope('write')
  @Idempotent()
  @HttpCode(202)
  @ApiOperation({
    summary: 'Upgrade to another version of its bundle',
    description: 'The deployment goes through UPGRADING. last-state restores the latest checkpoint; savepoint starts from a savepoint requested through POST …/savepoints/{savepointId}/restore (or without state); stateless starts without state. The transition reason says which.',
  })
  @ApiParam(ID_PARAM)
  @ApiBody({ type: UpgradeDeploymentRequestDto })
  @ApiAcceptedResponse({ type: DeploymentDto })
  @ApiProblemResponse(400, 'The body is invalid (another bundle, unknown version, incompatible maxParallelism); the problem names the field')
  @ApiProblemResponse(404, 'No deployment of this tenant has this id')
  @ApiProblemResponse(409, 'The deployment is cancelled, or the parallelism quota would be exceeded')
  async upgrade(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: unknown): Promise<DeploymentDto> {
    const params = parseInput(deploymentIdParams, { id }, 'path');
    const input = parseInput(upgradeDeploymentBody, body ?? {}, 'body');
    return DeploymentDto.from(await this.deployments.upgrade(principal.tenantId, params.id, input));
  }

  @Get(':id/history')
  @RequireScope('read')
  @ApiOperation({ summary: 'Runs (where, when, how they ended) and every status transition with its reason' })
  @ApiParam(ID_PARAM)
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE } })
  @ApiQuery({ name: 'cursor', required: false, description: 'nextCursor of the previous page of transitions' })
  @ApiOkResponse({ type: DeploymentHistoryDto })
  @ApiProblemResponse(400, 'A parameter is invalid; the problem names it')
  @ApiProblemResponse(404, 'No deployment of this tenant has this id')
  async history(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: unknown): Promise<DeploymentHistoryDto> {
    const params = parseInput(deploymentIdParams, { id }, 'path');
    const { limit, cursor } = parseInput(historyQuery, query, 'query');
    const history = await this.deployments.history(principal.tenantId, params.id, limit, cursor);
    return {
      runs: history.runs.map(RunDto.from),
      transitions: history.transitions.items.map(TransitionDto.from),
      nextCursor: history.transitions.nextCursor,
    };
  }
}

import { Body, Controller, Get, Param, Patch, Query } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { deploymentIdParams } from '../deployments/dto/deployment-input';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, pageQueryShape } from '../pagination/page-query';
import { ApiProblemResponse } from '../problems/api-problem-response.decorator';
import { ApiTenantAuth, CurrentPrincipal, RequireScope, type Principal } from '../tenancy';
import { parseInput } from '../validation/parse-input';
import { ScalingPolicyChangeDto, ScalingPolicyChangePageDto, ScalingPolicyDto, ScalingPolicyPatchDto, scalingPolicyPatchBody } from './scaling-policy.dto';
import { ScalingPolicyService } from './scaling-policy.service';

const listQuery = z.strictObject({ ...pageQueryShape });

@ApiTags('scaling-policy')
@ApiTenantAuth()
@ApiParam({ name: 'id', description: 'The deployment id' })
@ApiProblemResponse(400, 'A parameter is invalid; the problem names it')
@ApiProblemResponse(404, 'No deployment of this tenant has this id')
@ApiProblemResponse(500, 'Unexpected failure; the detail is generic and the request id is logged')
@ApiProblemResponse(503, 'A dependency (Postgres) is unavailable; retry later')
@Controller('v1/deployments/:id/scaling-policy')
export class ScalingPolicyController {
  constructor(private readonly policies: ScalingPolicyService) {}

  @Get()
  @RequireScope('read')
  @ApiOperation({
    summary: "The deployment's scaling policy: what the partitioner and the autoscaler may do, and how eagerly",
    description:
      "Until it is first changed (source properties) it is the deployment's properties (partitioner.interval-ms, autoscaler.*) over the defaults; both controllers read it at each look.",
  })
  @ApiOkResponse({ type: ScalingPolicyDto })
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<ScalingPolicyDto> {
    const params = parseInput(deploymentIdParams, { id }, 'path');
    return ScalingPolicyDto.from(await this.policies.get(principal.tenantId, params.id));
  }

  @Patch()
  @RequireScope('write')
  @ApiOperation({
    summary: 'Change fields of the scaling policy; the others stay as they are',
    description:
      "A merge: name any fields of partitioner and autoscaler (null is not a value). The merged policy is checked whole (bounds against the bundle's maxParallelism, minParallelism ≤ maxParallelism, aimBelow ≤ actAbove); a 400 names each field with its range. It takes effect at both controllers' next look, which is due at once; the change is recorded with who made it (GET …/scaling-policy/changes). Nothing else of the deployment changes.",
  })
  @ApiBody({ type: ScalingPolicyPatchDto })
  @ApiOkResponse({ type: ScalingPolicyDto })
  @ApiProblemResponse(409, 'The deployment is cancelled')
  async patch(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: unknown): Promise<ScalingPolicyDto> {
    const params = parseInput(deploymentIdParams, { id }, 'path');
    const input = parseInput(scalingPolicyPatchBody, body ?? {}, 'body');
    return ScalingPolicyDto.from(await this.policies.patch(principal, params.id, input));
  }

  @Get('changes')
  @RequireScope('read')
  @ApiOperation({ summary: "The policy's changes, newest first: who, when, the fields changed, the whole policy before and after" })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE } })
  @ApiQuery({ name: 'cursor', required: false, description: 'nextCursor of the previous page' })
  @ApiOkResponse({ type: ScalingPolicyChangePageDto })
  async changes(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: unknown): Promise<ScalingPolicyChangePageDto> {
    const params = parseInput(deploymentIdParams, { id }, 'path');
    const { limit, cursor } = parseInput(listQuery, query, 'query');
    const page = await this.policies.changes(principal.tenantId, params.id, limit, cursor);
    return { items: page.items.map(ScalingPolicyChangeDto.from), nextCursor: page.nextCursor };
  }
}

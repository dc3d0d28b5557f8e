import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { deploymentIdParams } from '../deployments/dto/deployment-input';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, pageQueryShape } from '../pagination/page-query';
import { ApiProblemResponse } from '../problems/api-problem-response.decorator';
import { ApiTenantAuth, CurrentPrincipal, RequireScope, type Principal } from '../tenancy';
import { parseInput } from '../validation/parse-input';
import { DECISION_ID_PATTERN } from './scaling-decision';
import { ScalingDecisionDto, ScalingDecisionPageDto } from './scaling-decision.dto';
import { ScalingDecisionsService } from './scaling-decisions.service';

const decisionParams = deploymentIdParams.extend({ decisionId: z.string().regex(DECISION_ID_PATTERN, 'must be a scaling decision id (s followed by 24 hex digits)') });
const listQuery = z.strictObject({ ...pageQueryShape });

@ApiTags('scaling-decisions')
@ApiTenantAuth()
@ApiParam({ name: 'id', description: 'The deployment id' })
@ApiProblemResponse(400, 'A parameter is invalid; the problem names it')
@ApiProblemResponse(404, 'No deployment (or decision) of this tenant has this id')
@ApiProblemResponse(500, 'Unexpected failure; the detail is generic and the request id is logged')
@ApiProblemResponse(503, 'A dependency (Postgres) is unavailable; retry later')
@Controller('v1/deployments/:id/scaling-decisions')
export class ScalingDecisionsController {
  constructor(private readonly decisions: ScalingDecisionsService) {}

  @Get()
  @RequireScope('read')
  @ApiOperation({
    summary: "The deployment's scaling decisions, the partitioner's and the autoscaler's, newest first",
    description:
      "The partitioner's with what they were decided on (the load model), what they flagged (overloaded subtasks, hot keys), the key groups they move (mode auto: carried out by `moveId`; recommend: recorded only) and what they declined with why. The autoscaler's (source autoscaler: SCALE_UP, SCALE_DOWN, HOLD) with their rates, busy time, backlog and SLO state, the parallelism from and to, and the reason. Balanced intervals are not recorded.",
  })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE } })
  @ApiQuery({ name: 'cursor', required: false, description: 'nextCursor of the previous page' })
  @ApiOkResponse({ type: ScalingDecisionPageDto })
  async list(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: unknown): Promise<ScalingDecisionPageDto> {
    const params = parseInput(deploymentIdParams, { id }, 'path');
    const { limit, cursor } = parseInput(listQuery, query, 'query');
    const page = await this.decisions.list(principal.tenantId, params.id, limit, cursor);
    return { items: page.items.map(ScalingDecisionDto.from), nextCursor: page.nextCursor };
  }

  @Get(':decisionId')
  @RequireScope('read')
  @ApiOperation({ summary: 'One scaling decision with its inputs, evidence and reason' })
  @ApiParam({ name: 'decisionId', description: 'The decision id' })
  @ApiOkResponse({ type: ScalingDecisionDto })
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('decisionId') decisionId: string): Promise<ScalingDecisionDto> {
    const params = parseInput(decisionParams, { id, decisionId }, 'path');
    return ScalingDecisionDto.from(await this.decisions.get(principal.tenantId, params.id, params.decisionId));
  }
}

import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { deploymentIdParams } from '../deployments/dto/deployment-input';
import { Idempotent } from '../idempotency';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, pageQueryShape } from '../pagination/page-query';
import { ApiProblemResponse } from '../problems/api-problem-response.decorator';
import { ApiTenantAuth, CurrentPrincipal, RequireScope, type Principal } from '../tenancy';
import { parseInput } from '../validation/parse-input';
import { MOVE_ID_PATTERN } from './key-group-move';
import { KeyGroupMoveDto, KeyGroupMovePageDto, MoveKeyGroupsRequestDto } from './key-group-move.dto';
import { KeyGroupMovesService } from './key-group-moves.service';
import { moveKeyGroupsBody } from './move-request';

const moveParams = deploymentIdParams.extend({ moveId: z.string().regex(MOVE_ID_PATTERN, 'must be a key-group move id (m followed by 24 hex digits)') });
const listQuery = z.strictObject({ ...pageQueryShape });

@ApiTags('key-group-moves')
@ApiTenantAuth()
@ApiParam({ name: 'id', description: 'The deployment id' })
@ApiProblemResponse(404, 'No deployment (or move) of this tenant has this id')
@ApiProblemResponse(500, 'Unexpected failure; the detail is generic and the request id is logged')
@ApiProblemResponse(503, 'A dependency (Postgres) is unavailable; retry later')
@Controller('v1/deployments/:id/key-group-moves')
export class KeyGroupMovesController {
  constructor(private readonly moves: KeyGroupMovesService) {}

  @Post()
  @RequireScope('write')
  @Idempotent()
  @HttpCode(202)
  @ApiOperation({
    summary: 'Move key groups of a keyed operator to other subtasks, live (asynchronous; poll GET …/key-group-moves/{moveId})',
    description:
      'Only the moving key groups pause while their state is handed over; the rest of the job keeps running. The move is recorded PENDING with each key group’s current owner, then DONE with the report or FAILED with the reason; a DONE move’s routing is what later runs start with.',
  })
  @ApiBody({ type: MoveKeyGroupsRequestDto })
  @ApiAcceptedResponse({ type: KeyGroupMoveDto })
  @ApiProblemResponse(400, 'The body is invalid: an unknown operator, a key group out of range or named twice, a subtask the operator does not have, a key group already there; the problem names the field')
  @ApiProblemResponse(409, 'The deployment is not RUNNING (or is about to restart), or another move is in flight')
  async request(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: unknown): Promise<KeyGroupMoveDto> {
    const params = parseInput(deploymentIdParams, { id }, 'path');
    const input = parseInput(moveKeyGroupsBody, body ?? {}, 'body');
    return KeyGroupMoveDto.from(await this.moves.request(principal, params.id, input));
  }

  @Get()
  @RequireScope('read')
  @ApiOperation({ summary: "The deployment's key-group moves, newest first" })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE } })
  @ApiQuery({ name: 'cursor', required: false, description: 'nextCursor of the previous page' })
  @ApiOkResponse({ type: KeyGroupMovePageDto })
  @ApiProblemResponse(400, 'A parameter is invalid; the problem names it')
  async list(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: unknown): Promise<KeyGroupMovePageDto> {
    const params = parseInput(deploymentIdParams, { id }, 'path');
    const { limit, cursor } = parseInput(listQuery, query, 'query');
    const page = await this.moves.list(principal.tenantId, params.id, limit, cursor);
    return { items: page.items.map(KeyGroupMoveDto.from), nextCursor: page.nextCursor };
  }

  @Get(':moveId')
  @RequireScope('read')
  @ApiOperation({ summary: 'One key-group move: PENDING, DONE (with its report) or FAILED (with the reason)' })
  @ApiParam({ name: 'moveId', description: 'The move id' })
  @ApiOkResponse({ type: KeyGroupMoveDto })
  @ApiProblemResponse(400, 'An id is malformed; the problem names it')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('moveId') moveId: string): Promise<KeyGroupMoveDto> {
    const params = parseInput(moveParams, { id, moveId }, 'path');
    return KeyGroupMoveDto.from(await this.moves.get(principal.tenantId, params.id, params.moveId));
  }
}

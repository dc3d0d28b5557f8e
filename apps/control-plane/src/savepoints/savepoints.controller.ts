import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Idempotent } from '../idempotency';
import { ApiProblemResponse } from '../problems/api-problem-response.decorator';
import { ApiTenantAuth, CurrentPrincipal, RequireScope, type Principal } from '../tenancy';
import { parseInput } from '../validation/parse-input';
import { DeploymentDto } from '../deployments/dto/deployment.dto';
import { restoreCheckBody, restoreSavepointBody, savepointParams, triggerSavepointBody } from './savepoint-input';
import { RestoreCheckDto, RestoreCheckRequestDto, RestoreSavepointRequestDto, SavepointListDto, SavepointStatusDto, TriggerSavepointRequestDto } from './savepoint.dto';
import { SavepointsService } from './savepoints.service';

@ApiTags('savepoints')
@ApiTenantAuth()
@ApiProblemResponse(404, 'No deployment (or savepoint) of this tenant has this id')
@ApiProblemResponse(500, 'Unexpected failure; the detail is generic and the request id is logged')
@ApiProblemResponse(503, 'A dependency is unavailable; retry later')
@Controller('v1/deployments/:id/savepoints')
export class SavepointsController {
  constructor(private readonly savepoints: SavepointsService) {}

  @Post()
  @RequireScope('write')
  @Idempotent()
  @HttpCode(202)
  @ApiOperation({ summary: 'Trigger a savepoint (asynchronous; poll GET …/savepoints/{savepointId}); with stop: true, stop-with-savepoint' })
  @ApiBody({ type: TriggerSavepointRequestDto })
  @ApiAcceptedResponse({ type: SavepointStatusDto })
  @ApiProblemResponse(409, 'The deployment is not running')
  async trigger(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: unknown): Promise<SavepointStatusDto> {
    const params = parseInput(savepointParams, { id }, 'path');
    const input = parseInput(triggerSavepointBody, body ?? {}, 'body');
    return this.savepoints.trigger(principal.tenantId, params.id, input) as Promise<SavepointStatusDto>;
  }

  @Get()
  @RequireScope('read')
  @ApiOperation({ summary: "The deployment's savepoints, oldest first" })
  @ApiOkResponse({ type: SavepointListDto })
  async list(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<SavepointListDto> {
    const params = parseInput(savepointParams, { id }, 'path');
    return { items: (await this.savepoints.list(principal.tenantId, params.id)) as SavepointListDto['items'] };
  }

  @Get(':savepointId')
  @RequireScope('read')
  @ApiOperation({ summary: 'A savepoint or trigger: PENDING, COMPLETED (with the savepoint) or FAILED (with the reason)' })
  @ApiOkResponse({ type: SavepointStatusDto })
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('savepointId') savepointId: string): Promise<SavepointStatusDto> {
    const params = parseInput(savepointParams, { id, savepointId }, 'path');
    return this.savepoints.status(principal.tenantId, params.id, params.savepointId!) as Promise<SavepointStatusDto>;
  }

  @Delete(':savepointId')
  @RequireScope('write')
  @HttpCode(204)
  @ApiOperation({ summary: 'Dispose of a savepoint (its files go once nothing else references them)' })
  @ApiNoContentResponse()
  async dispose(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('savepointId') savepointId: string): Promise<void> {
    const params = parseInput(savepointParams, { id, savepointId }, 'path');
    await this.savepoints.dispose(principal.tenantId, params.id, params.savepointId!);
  }

  @Post(':savepointId/restore')
  @RequireScope('write')
  @Idempotent()
  @HttpCode(202)
  @ApiOperation({
    summary: 'Start a SUSPENDED deployment from this savepoint, optionally in another bundle version and parallelism',
    description: 'Refused (409, naming each operator) when state would be dropped, unless allowNonRestoredState is true, or cannot be read.',
  })
  @ApiBody({ type: RestoreSavepointRequestDto })
  @ApiAcceptedResponse({ type: DeploymentDto })
  @ApiProblemResponse(400, 'The body is invalid (or names another bundle, an unknown version, a bad parallelism)')
  @ApiProblemResponse(409, 'The deployment is not SUSPENDED, or the savepoint does not fit the bundle (the detail names the operators)')
  async restore(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Param('savepointId') savepointId: string,
    @Body() body: unknown,
  ): Promise<DeploymentDto> {
    const params = parseInput(savepointParams, { id, savepointId }, 'path');
    const input = parseInput(restoreSavepointBody, body ?? {}, 'body');
    return DeploymentDto.from(await this.savepoints.restore(principal.tenantId, params.id, params.savepointId!, input));
  }

  @Post(':savepointId/restore-check')
  @RequireScope('read')
  @HttpCode(200)
  @ApiOperation({ summary: 'Dry run: can bundle version X restore this savepoint? Names each operator whose state would be dropped or cannot be read' })
  @ApiBody({ type: RestoreCheckRequestDto })
  @ApiOkResponse({ type: RestoreCheckDto })
  @ApiProblemResponse(400, 'The body is invalid or names an unknown bundle')
  async check(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Param('savepointId') savepointId: string,
    @Body() body: unknown,
  ): Promise<RestoreCheckDto> {
    const params = parseInput(savepointParams, { id, savepointId }, 'path');
    const input = parseInput(restoreCheckBody, body ?? {}, 'body');
    return this.savepoints.check(principal.tenantId, params.id, params.savepointId!, input.bundleId) as Promise<RestoreCheckDto>;
  }
}

import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../pagination/page-query';
import { ApiProblemResponse } from '../problems/api-problem-response.decorator';
import { parseInput } from '../validation/parse-input';
import { listWorkersQuerySchema, workerIdParamsSchema } from './dto/list-workers.query';
import { WorkerDto, WorkerPageDto } from './dto/worker.dto';
import { WORKER_STATUSES } from './worker';
import { AdminOnly } from '../tenancy';
import { WorkerRegistry } from './worker-registry.service';

// The fleet is platform-wide (it names every tenant's running subtasks): platform administrators only.
@AdminOnly()
@ApiTags('workers')
@ApiProblemResponse(500, 'Unexpected failure; the detail is generic and the request id is logged')
@ApiProblemResponse(503, 'A dependency (Postgres) is unavailable; retry later')
@Controller('v1/workers')
export class WorkersController {
  constructor(private readonly registry: WorkerRegistry) {}

  @Get()
  @ApiOperation({ summary: 'List the worker fleet, in id order' })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE } })
  @ApiQuery({ name: 'cursor', required: false, description: 'nextCursor of the previous page' })
  @ApiQuery({ name: 'status', required: false, enum: WORKER_STATUSES })
  @ApiOkResponse({ type: WorkerPageDto })
  @ApiProblemResponse(400, 'A query parameter is invalid; the problem names it')
  async list(@Query() query: unknown): Promise<WorkerPageDto> {
    const { limit, cursor, status } = parseInput(listWorkersQuerySchema, query, 'query');
    const page = await this.registry.list(limit, cursor, status);
    return { items: page.items.map(WorkerDto.from), nextCursor: page.nextCursor };
  }

  @Get(':id')
  @ApiOperation({ summary: 'One worker' })
  @ApiParam({ name: 'id', description: 'The worker id (WEIR_WORKER_ID of the worker process)' })
  @ApiOkResponse({ type: WorkerDto })
  @ApiProblemResponse(404, 'No worker has this id')
  @ApiProblemResponse(400, 'The id is not a valid worker id')
  async get(@Param('id') id: string): Promise<WorkerDto> {
    const params = parseInput(workerIdParamsSchema, { id }, 'path');
    return WorkerDto.from(await this.registry.get(params.id));
  }
}

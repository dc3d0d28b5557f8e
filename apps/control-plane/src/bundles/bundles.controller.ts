import { Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiIdempotencyKey } from '../idempotency/idempotent.decorator';
import { idempotencyKeyOf } from '../idempotency/idempotency-key';
import { REPLAYED_HEADER } from '../idempotency/idempotency.interceptor';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../pagination/page-query';
import { ApiProblemResponse } from '../problems/api-problem-response.decorator';
import { InvalidRequestProblem } from '../problems/problem.exception';
import { parseInput } from '../validation/parse-input';
import { ApiTenantAuth } from '../tenancy/api-docs.decorators';
import { CurrentPrincipal, RequireScope } from '../tenancy/auth.decorators';
import type { Principal } from '../tenancy/principal';
import { BundlesService } from './bundles.service';
import { BundleDto, BundlePageDto, UploadBundleDto } from './dto/bundle.dto';
import { bundleIdParamsSchema, bundleVersionParamsSchema, decodeBundleKey, listBundlesQuerySchema } from './dto/bundle.input';

@ApiTags('bundles')
@ApiTenantAuth()
@ApiProblemResponse(500, 'Unexpected failure; the detail is generic and the request id is logged')
@ApiProblemResponse(503, 'A dependency (Postgres, S3, the bundle check) is unavailable; nothing was stored; retry later')
@Controller('v1/bundles')
export class BundlesController {
  constructor(private readonly bundles: BundlesService) {}

  @Post()
  @HttpCode(201)
  @RequireScope('write')
  @ApiOperation({
    summary: 'Upload a job bundle: multipart/form-data, the manifest field first, then the bundle file',
    description:
      "Streamed to S3 while hashed (sha256); cut off past the tenant's maxBundleBytes (413). The manifest is validated before any byte is stored; then the bundle is loaded in a sandbox (a V8 isolate with no Node, file system, network or environment, within a memory and a time limit) and the manifest's operatorIds and maxParallelism must be its job's. Versions are immutable. Nothing is kept on failure.",
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: UploadBundleDto })
  @ApiIdempotencyKey()
  @ApiCreatedResponse({ type: BundleDto })
  @ApiProblemResponse(
    400,
    "Malformed multipart, a part missing or out of order, an invalid manifest, a manifest that disagrees with the bundle's job, or a bundle that does not load as a job in the sandbox (the problem names the field and why)",
  )
  @ApiProblemResponse(413, "The bundle is larger than the tenant's maxBundleBytes (type urn:weir:problem:quota-exceeded)")
  async upload(
    @CurrentPrincipal() principal: Principal,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<BundleDto> {
    let key: string | undefined;
    try {
      key = idempotencyKeyOf(request.headers);
    } catch (err) {
      request.raw.resume();
      throw err;
    }
    // The raw stream: the multipart body is read part by part as it arrives (app.ts leaves it unparsed).
    const result = await this.bundles.upload(principal.tenantId, request.raw, key);
    if (result.replayed) reply.status(result.statusCode).header(REPLAYED_HEADER, 'true');
    return result.body;
  }

  @Get()
  @RequireScope('read')
  @ApiOperation({ summary: "The tenant's bundles in (name, version) order" })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE } })
  @ApiQuery({ name: 'cursor', required: false, description: 'nextCursor of the previous page' })
  @ApiQuery({ name: 'name', required: false, description: 'Only the versions of this bundle' })
  @ApiOkResponse({ type: BundlePageDto })
  @ApiProblemResponse(400, 'A query parameter is invalid; the problem names it')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: unknown): Promise<BundlePageDto> {
    const { limit, cursor, name } = parseInput(listBundlesQuerySchema, query, 'query');
    const after = decodeBundleKey(cursor);
    if (cursor !== undefined && !after) throw new InvalidRequestProblem([{ in: 'query', name: 'cursor', reason: 'is not a cursor returned by this API' }]);
    const page = await this.bundles.list(principal.tenantId, limit, after, name);
    return { items: page.items.map(BundleDto.from), nextCursor: page.nextCursor };
  }

  @Get(':name/versions/:version')
  @RequireScope('read')
  @ApiOperation({ summary: 'One version of a bundle, by name and version' })
  @ApiParam({ name: 'name' })
  @ApiParam({ name: 'version' })
  @ApiOkResponse({ type: BundleDto })
  @ApiProblemResponse(400, 'The name or version is malformed')
  @ApiProblemResponse(404, 'The tenant has no such bundle version')
  async getVersion(@CurrentPrincipal() principal: Principal, @Param('name') name: string, @Param('version') version: string): Promise<BundleDto> {
    const params = parseInput(bundleVersionParamsSchema, { name, version }, 'path');
    return BundleDto.from(await this.bundles.getVersion(principal.tenantId, params.name, params.version));
  }

  @Get(':id')
  @RequireScope('read')
  @ApiOperation({ summary: 'One bundle, by id' })
  @ApiParam({ name: 'id' })
  @ApiOkResponse({ type: BundleDto })
  @ApiProblemResponse(400, 'The id is not a bundle id')
  @ApiProblemResponse(404, 'The tenant has no bundle with this id')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<BundleDto> {
    const params = parseInput(bundleIdParamsSchema, { id }, 'path');
    return BundleDto.from(await this.bundles.get(principal.tenantId, params.id));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScope('write')
  @ApiOperation({ summary: 'Delete a bundle no deployment uses (row and S3 object)' })
  @ApiParam({ name: 'id' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiProblemResponse(400, 'The id is not a bundle id')
  @ApiProblemResponse(404, 'The tenant has no bundle with this id')
  @ApiProblemResponse(409, 'A deployment (or one of its runs) uses the bundle')
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    const params = parseInput(bundleIdParamsSchema, { id }, 'path');
    await this.bundles.delete(principal.tenantId, params.id);
  }
}

import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { Bundle } from '../bundle';

export class BundleSloDto {
  @ApiProperty({ description: 'Objective on event-time latency, in ms', example: 500 }) objectiveMs!: number;
  @ApiProperty({ description: 'Latency percentile the objective applies to (0 < p < 100)', example: 99 }) percentile!: number;
  @ApiProperty({ description: 'Compliance window, in minutes', example: 60 }) windowMinutes!: number;
  @ApiProperty({ description: 'Fraction of minutes that must meet the objective (0 < t <= 1)', example: 0.99 }) target!: number;
}

export class BundleManifestDto {
  @ApiProperty({ description: 'Slug: a-z, 0-9, "-"', example: 'fraud-detector', pattern: '^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$' }) name!: string;
  @ApiProperty({ description: 'Semantic version; versions are immutable', example: '1.4.0' }) version!: string;
  @ApiProperty({ description: "The bundle's file name", example: 'job.js' }) entryPoint!: string;
  @ApiProperty({ type: [String], description: "The job's stable operator ids", example: ['source', 'score', 'sink'] }) operatorIds!: string[];
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'JSON Schema (2020-12, or draft-07 via $schema) of the rules the job accepts' })
  rulesSchema!: Record<string, unknown>;
  @ApiProperty({ minimum: 1, maximum: 1024 }) defaultParallelism!: number;
  @ApiProperty({ minimum: 1, maximum: 32768, description: 'Key-group count, fixed for the life of a deployment' }) maxParallelism!: number;
  @ApiPropertyOptional({ type: BundleSloDto }) slo?: BundleSloDto;
  @ApiPropertyOptional({ type: [String], description: 'Kafka topics the job reads or writes' }) topics?: string[];
}

export class BundleDto {
  @ApiProperty({ example: 'b5f0c6a1d9e2b7c4a8d3e1f60' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() version!: string;
  @ApiProperty({ description: 'Hex sha256 of the bundle file' }) sha256!: string;
  @ApiProperty() sizeBytes!: number;
  @ApiProperty({ type: BundleManifestDto }) manifest!: BundleManifestDto;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;

  static from(bundle: Bundle): BundleDto {
    return {
      id: bundle.id,
      name: bundle.name,
      version: bundle.version,
      sha256: bundle.sha256,
      sizeBytes: bundle.sizeBytes,
      manifest: bundle.manifest as BundleManifestDto,
      createdAt: bundle.createdAt.toISOString(),
    };
  }
}

export class BundlePageDto {
  @ApiProperty({ type: [BundleDto] }) items!: BundleDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  nextCursor!: string | null;
}

/** The multipart body, for the OpenAPI document. */
export class UploadBundleDto {
  @ApiProperty({ type: 'string', description: 'The manifest, as JSON (BundleManifest); must come first', example: '{"name":"fraud-detector",…}' })
  manifest!: string;
  @ApiProperty({ type: 'string', format: 'binary', description: "The bundle file (CommonJS); at most the tenant's maxBundleBytes" })
  bundle!: unknown;
}

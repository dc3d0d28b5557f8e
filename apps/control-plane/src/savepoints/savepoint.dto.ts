import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class TriggerSavepointRequestDto {
  @ApiPropertyOptional({ description: 'Trigger id = savepoint id; a retried trigger with the same id takes no second savepoint' }) savepointId?: string;
  @ApiPropertyOptional({ description: 'Stop the deployment (desired state SUSPENDED) once the savepoint is taken' }) stop?: boolean;
}

export class SavepointSummaryDto {
  @ApiProperty() savepointId!: string;
  @ApiProperty({ description: 'The barrier id the savepoint was cut at' }) checkpointId!: number;
  @ApiProperty() createdAt!: string;
  @ApiProperty({ description: 'The manifest key on S3' }) location!: string;
  @ApiProperty() maxParallelism!: number;
  @ApiProperty({ type: [String] }) operators!: string[];
  @ApiProperty() stateBytes!: number;
}

export class SavepointStatusDto {
  @ApiProperty() savepointId!: string;
  @ApiProperty({ enum: ['PENDING', 'COMPLETED', 'FAILED'] }) state!: string;
  @ApiProperty({ nullable: true, type: String }) failureReason!: string | null;
  @ApiProperty({ nullable: true, type: SavepointSummaryDto }) savepoint!: SavepointSummaryDto | null;
}

export class SavepointListDto {
  @ApiProperty({ type: [SavepointSummaryDto] }) items!: SavepointSummaryDto[];
}

export class RestoreCheckRequestDto {
  @ApiProperty({ description: 'The bundle version to check against' }) bundleId!: string;
}

export class UnreadableStateDto {
  @ApiProperty() operatorId!: string;
  @ApiProperty() reason!: string;
}

export class RestoreCheckDto {
  @ApiProperty() bundleId!: string;
  @ApiProperty({ description: 'Everything in the savepoint would be restored' }) ok!: boolean;
  @ApiProperty({ type: [String], description: 'Operators whose state the bundle does not have (dropped on restore)' }) dropped!: string[];
  @ApiProperty({ type: [UnreadableStateDto] }) unreadable!: UnreadableStateDto[];
  @ApiProperty() explanation!: string;
}

export class RestoreSavepointRequestDto {
  @ApiPropertyOptional({ description: 'Another version of the deployment\'s bundle; default: the current one' }) bundleId?: string;
  @ApiPropertyOptional({ description: 'Parallelism to restore at: { default, operators }' }) parallelism?: Record<string, unknown>;
  @ApiPropertyOptional({ description: 'Drop the state of operators the bundle does not have instead of refusing' }) allowNonRestoredState?: boolean;
}

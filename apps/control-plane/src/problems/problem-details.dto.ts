import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class InvalidParameterDto {
  @ApiProperty({ enum: ['query', 'path', 'body', 'header'] }) in!: string;
  @ApiProperty({ example: 'limit' }) name!: string;
  @ApiProperty({ example: 'must be an integer from 1 to 200' }) reason!: string;
}

/** RFC 9457 problem details, served as application/problem+json. */
export class ProblemDetailsDto {
  @ApiProperty({ example: 'urn:weir:problem:invalid-request' }) type!: string;
  @ApiProperty({ example: 'Invalid request' }) title!: string;
  @ApiProperty({ example: 400 }) status!: number;
  @ApiPropertyOptional() detail?: string;
  @ApiPropertyOptional({ example: '/v1/workers' }) instance?: string;
  @ApiPropertyOptional({ description: 'The request id, also in the X-Request-Id response header' }) requestId?: string;
  @ApiPropertyOptional({ type: [InvalidParameterDto] }) errors?: InvalidParameterDto[];
}

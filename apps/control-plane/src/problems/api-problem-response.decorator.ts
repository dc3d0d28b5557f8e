import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { PROBLEM_CONTENT_TYPE } from './problem-details';
import { ProblemDetailsDto } from './problem-details.dto';

/** Documents an error response as RFC 9457 problem details, with the content type the filter really sends. */
export function ApiProblemResponse(status: number, description: string, headers?: Record<string, { description: string; schema: { type: 'integer' | 'string' } }>) {
  return applyDecorators(
    ApiExtraModels(ProblemDetailsDto),
    ApiResponse({
      status,
      description,
      ...(headers ? { headers } : {}),
      content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: getSchemaPath(ProblemDetailsDto) } } },
    }),
  );
}

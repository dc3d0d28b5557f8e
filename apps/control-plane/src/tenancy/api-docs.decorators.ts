import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ApiProblemResponse } from '../problems/api-problem-response.decorator';

/** Security scheme names, declared in the OpenAPI document (openapi/document.ts). */
export const API_KEY_SCHEME = 'apiKey';
export const ADMIN_TOKEN_SCHEME = 'adminToken';

/** Documents a tenant route: bearer API key, 401 without a valid one, 403 when its scope is insufficient. */
export function ApiTenantAuth() {
  return applyDecorators(
    ApiBearerAuth(API_KEY_SCHEME),
    ApiProblemResponse(401, 'No API key, or an invalid or revoked one'),
    ApiProblemResponse(403, "The API key's scope does not allow this call"),
  );
}

/** Documents a platform-admin route: bearer WEIR_ADMIN_TOKEN. */
export function ApiAdminAuth() {
  return applyDecorators(
    ApiBearerAuth(ADMIN_TOKEN_SCHEME),
    ApiProblemResponse(401, 'Not the platform admin token'),
    ApiProblemResponse(403, 'Administration is disabled (WEIR_ADMIN_TOKEN unset)'),
  );
}

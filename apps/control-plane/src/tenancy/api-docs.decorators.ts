import { applyDecorators } from '@nestjs/common';
import { ApiProblemResponse } from '../problems/api-problem-response.decorator';

/** Security scheme names, declared in the OpenAPI document (openapi/document.ts). */
export const API_KEY_SCHEME = 'apiKey';
export const ADMIN_TOKEN_SCHEME = 'adminToken';

/**
 * Documents a tenant route's refusals: 401 without a valid API key, 403 when its scope is insufficient, 429 over the
 * key's or its tenant's rate limit (rate-limits/, with Retry-After). The
 * operation's `security` is not set here: it is derived from the guard's own metadata (openapi/route-security.ts).
 */
export function ApiTenantAuth() {
  return applyDecorators(
    ApiProblemResponse(401, 'No API key, or an invalid or revoked one'),
    ApiProblemResponse(403, "The API key's scope does not allow this call"),
    ApiProblemResponse(429, "Over the API key's or its tenant's rate limit (WEIR_RATE_LIMIT_*); the detail names which", {
      'Retry-After': { description: 'Seconds until the request will be counted anew', schema: { type: 'integer' } },
    }),
  );
}

/** Documents a platform-admin route's refusals (applied by @AdminOnly()). */
export function ApiAdminAuth() {
  return applyDecorators(
    ApiProblemResponse(401, 'Not the platform admin token'),
    ApiProblemResponse(403, 'Administration is disabled (WEIR_ADMIN_TOKEN unset)'),
  );
}

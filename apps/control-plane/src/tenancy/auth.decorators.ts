import { createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { Principal, Scope } from './principal';

export const IS_PUBLIC = 'weir:auth:public';
export const REQUIRED_SCOPE = 'weir:auth:scope';
export const ADMIN_ONLY = 'weir:auth:admin';

/** The route needs no credential (health checks, say). Routes outside /v1 are public anyway. */
export const Public = () => SetMetadata(IS_PUBLIC, true);

/**
 * The scope a handler needs. Without it the guard requires `read` for GET/HEAD/OPTIONS and `write` for anything
 * else, so a forgotten decorator never opens a mutation to a read key.
 */
export const RequireScope = (scope: Scope) => SetMetadata(REQUIRED_SCOPE, scope);

/** Platform administration: the caller presents WEIR_ADMIN_TOKEN instead of a tenant's API key. */
export const AdminOnly = () => SetMetadata(ADMIN_ONLY, true);

/** Where the guard leaves the authenticated principal on the request. */
export interface AuthenticatedRequest {
  principal?: Principal;
  platformAdmin?: boolean;
}

/** The caller of a tenant route. Using it on a public or admin route is a programming error (500). */
export const CurrentPrincipal = createParamDecorator((_data: unknown, ctx: ExecutionContext): Principal => {
  const principal = ctx.switchToHttp().getRequest<AuthenticatedRequest>().principal;
  if (!principal) throw new Error('CurrentPrincipal used on a route the auth guard did not authenticate');
  return principal;
});

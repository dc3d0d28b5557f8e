import { applyDecorators, createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import { ApiAdminAuth } from './api-docs.decorators';
import type { Principal, Scope } from './principal';
import { ROUTE_AUTH, type RouteAuth } from './route-auth';

/**
 * The route needs no credential. The reason is required and shows in docs/tenancy.md's list of public routes: a
 * route is public only by a deliberate, explained mark, never because it lacks one.
 */
export const Public = (reason: string) => SetMetadata<string, RouteAuth>(ROUTE_AUTH, { kind: 'public', reason });

/** A tenant's API key holding `scope` (a write key holds read too). On a handler, or on a controller for all its handlers. */
export const RequireScope = (scope: Scope) => SetMetadata<string, RouteAuth>(ROUTE_AUTH, { kind: 'tenant', scope });

/**
 * Platform administration: the caller presents WEIR_ADMIN_TOKEN instead of a tenant's API key. Also documents the
 * 401/403 answers; the OpenAPI security itself is derived from the same metadata (openapi/route-security.ts).
 */
export const AdminOnly = () => applyDecorators(SetMetadata<string, RouteAuth>(ROUTE_AUTH, { kind: 'admin' }), ApiAdminAuth());

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

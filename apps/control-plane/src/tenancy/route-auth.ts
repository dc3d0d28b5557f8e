import type { Reflector } from '@nestjs/core';
import type { Scope } from './principal';

/** The metadata key of a route's authentication decision (set by @Public, @AdminOnly, @RequireScope). */
export const ROUTE_AUTH = 'weir:auth:route';

/**
 * What a route demands of its caller. It is read from the route the router matched, never from the URL's text, so
 * every spelling of a path that reaches a handler meets that handler's decision.
 * - `public`: no credential (the reason says why);
 * - `admin`: the platform admin token (WEIR_ADMIN_TOKEN);
 * - `tenant`: a tenant's API key holding `scope`.
 */
export type RouteAuth =
  | { readonly kind: 'public'; readonly reason: string }
  | { readonly kind: 'admin' }
  | { readonly kind: 'tenant'; readonly scope: Scope };

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- Nest's handlers and controllers are plain functions and classes
type Target = Function;

/**
 * The decision for a handler of a controller: the handler's own mark wins over its controller's (a public handler in
 * an admin controller, say). Undefined when neither carries one: the guard refuses such a route, and the app does not
 * start with one (assertEveryRouteDecided).
 */
export function routeAuthOf(reflector: Reflector, handler: Target, controller: Target): RouteAuth | undefined {
  return reflector.getAllAndOverride<RouteAuth | undefined>(ROUTE_AUTH, [handler, controller]);
}

/** How the decision reads in a message or a test name: `public`, `admin`, `tenant:write`. */
export function describeRouteAuth(auth: RouteAuth | undefined): string {
  if (!auth) return 'undecided';
  return auth.kind === 'tenant' ? `tenant:${auth.scope}` : auth.kind;
}

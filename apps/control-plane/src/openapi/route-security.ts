import type { OpenAPIObject } from '@nestjs/swagger';
import { getSchemaPath } from '@nestjs/swagger';
import { PROBLEM_CONTENT_TYPE } from '../problems/problem-details';
import { ProblemDetailsDto } from '../problems/problem-details.dto';
import { ADMIN_TOKEN_SCHEME, API_KEY_SCHEME, describeRouteAuth, type ControllerRoute, type RouteAuth } from '../tenancy';

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

type SecurityRequirement = Record<string, string[]>;

/** An operation of the document, as far as this file reads and writes it. */
interface Operation {
  security?: SecurityRequirement[];
  responses?: Record<string, unknown>;
  'x-weir-scope'?: string;
}

/** The scope a tenant route needs, beside its security (bearer schemes carry no scopes in OpenAPI). */
export const SCOPE_EXTENSION = 'x-weir-scope';

/** What the guard demands, as an OpenAPI security requirement: none for a public route, else one bearer scheme. */
export function securityOf(auth: RouteAuth): SecurityRequirement[] {
  if (auth.kind === 'public') return [];
  return [{ [auth.kind === 'admin' ? ADMIN_TOKEN_SCHEME : API_KEY_SCHEME]: [] }];
}

/** The document's path for a router pattern: `/v1/tenants/:id` → `/v1/tenants/{id}`. */
export function openApiPath(routerPath: string): string {
  return routerPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * Sets every operation's `security` from the decision the guard reads (tenancy/route-auth.ts), so the document
 * cannot claim another one; throws when a route is undecided or missing from the document, or the document has an
 * operation no route serves. Every operation also documents the 400 the HTTP layer gives any request (a broken
 * percent-escape, NUL or bytes that are not UTF-8), every guarded one its 401, every one with a path parameter its 414.
 */
export function applyRouteSecurity(document: OpenAPIObject, routes: readonly ControllerRoute[]): void {
  const seen = new Set<string>();
  for (const route of routes) {
    const path = openApiPath(route.path);
    const operation = (document.paths[path] as Record<string, Operation> | undefined)?.[route.method.toLowerCase()];
    if (!operation) throw new Error(`${route.method} ${route.path} (${route.handler}) is missing from the OpenAPI document`);
    if (!route.auth) throw new Error(`${route.method} ${route.path} (${route.handler}) has no authentication decision (${describeRouteAuth(route.auth)})`);
    seen.add(`${route.method.toLowerCase()} ${path}`);
    operation.security = securityOf(route.auth);
    if (route.auth.kind === 'tenant') operation[SCOPE_EXTENSION] = route.auth.scope;
    operation.responses ??= {};
    operation.responses['400'] ??= problemResponse('The request is malformed: a broken percent-escape, or NUL or bytes that are not UTF-8 in the path, query or body; the problem names the parameter');
    if (route.auth.kind !== 'public') operation.responses['401'] ??= problemResponse('No valid credential');
    if (path.includes('{')) operation.responses['414'] ??= problemResponse('A path segment is longer than the router accepts (512 characters)');
  }
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const method of Object.keys(operations).filter((key) => HTTP_METHODS.has(key))) {
      if (!seen.has(`${method} ${path}`)) throw new Error(`The OpenAPI document has ${method.toUpperCase()} ${path}, which no route serves`);
    }
  }
}

function problemResponse(description: string): unknown {
  return { description, content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: getSchemaPath(ProblemDetailsDto) } } } };
}

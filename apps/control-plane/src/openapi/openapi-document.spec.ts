import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { loadConfig } from '@weir/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../app';
import { controllerRoutes, describeRouteAuth, type ControllerRoute } from '../tenancy';
import { buildOpenApiDocument } from './document';
import { openApiPath, SCOPE_EXTENSION } from './route-security';

const CHECKED_IN = resolve(__dirname, '../../../../openapi/openapi.json');

interface Operation {
  security?: Record<string, string[]>[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
  [SCOPE_EXTENSION]?: string;
}
type Document = { paths: Record<string, Record<string, Operation>> };

describe('openapi/openapi.json', () => {
  let app: NestFastifyApplication;
  let routes: ControllerRoute[];
  const checkedIn = JSON.parse(readFileSync(CHECKED_IN, 'utf8')) as Document;
  const operationOf = (route: ControllerRoute) => checkedIn.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];

  beforeAll(async () => {
    // Built, not initialised: nothing connects, as in generate.ts.
    app = await createApp({ config: { ...loadConfig({}), WEIR_LOG_LEVEL: 'warn' } }, { init: false });
    routes = controllerRoutes(app);
  });
  afterAll(() => app?.close());

  it('is what the code generates (run `npm run openapi` after changing an endpoint)', () => {
    const generated = `${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`;
    expect(readFileSync(CHECKED_IN, 'utf8'), 'openapi/openapi.json is stale: run `npm run openapi`').toBe(generated);
  });

  it("declares on every operation exactly the security the auth guard's metadata demands", () => {
    expect(routes.length).toBeGreaterThan(40);
    const declared = routes.map((route) => {
      const op = operationOf(route);
      return `${route.method} ${route.path}: ${JSON.stringify(op?.security)} ${op?.[SCOPE_EXTENSION] ?? ''}`.trim();
    });
    const expected = routes.map((route) => {
      const auth = route.auth;
      const security = !auth ? 'undecided' : auth.kind === 'public' ? '[]' : auth.kind === 'admin' ? '[{"adminToken":[]}]' : '[{"apiKey":[]}]';
      return `${route.method} ${route.path}: ${security} ${auth?.kind === 'tenant' ? auth.scope : ''}`.trim();
    });
    expect(declared).toEqual(expected);
    // The two known gaps of the past: the worker fleet is admin-only, and a route is public only when marked so.
    expect(routes.filter((r) => r.path.startsWith('/v1/workers')).map((r) => describeRouteAuth(r.auth))).toEqual(['admin', 'admin']);
    expect(routes.filter((r) => r.auth?.kind === 'public').map((r) => r.path).sort()).toEqual(['/health', '/health/ready']);
  });

  it('declares a request body on every operation whose handler reads one, and the refusals of every guarded one', () => {
    for (const route of routes) {
      const op = operationOf(route)!;
      if (readsBody(route)) expect(op.requestBody, `${route.method} ${route.path} reads a body`).toBeDefined();
      expect(Object.keys(op.responses), `${route.method} ${route.path}`).toContain('400');
      if (route.auth?.kind !== 'public') expect(Object.keys(op.responses), `${route.method} ${route.path}`).toContain('401');
      if (route.auth?.kind === 'tenant' && route.auth.scope === 'write') expect(Object.keys(op.responses), `${route.method} ${route.path}`).toContain('403');
    }
    expect(routes.filter(readsBody).length, 'routes with a @Body() parameter').toBeGreaterThan(8);
  });
});

/** Whether the handler takes a @Body() parameter: Nest keeps each handler's parameter decorators on its controller. */
function readsBody(route: ControllerRoute): boolean {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, route.controllerRef, route.methodName) ?? {}) as Record<string, unknown>;
  return Object.keys(args).some((key) => Number(key.split(':')[0]) === RouteParamtypes.BODY);
}


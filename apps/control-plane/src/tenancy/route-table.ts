import { RequestMethod, type INestApplication } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { describeRouteAuth, routeAuthOf, type RouteAuth } from './route-auth';

/** One method of one path the HTTP server answers, with the decision the guard applies to it. */
export interface RouteEntry {
  readonly method: string;
  /** The router's pattern: `/v1/tenants/:id`. */
  readonly path: string;
  /** `TenantsController.get`, or `external` for a route registered outside Nest's controllers (GraphQL). */
  readonly handler: string;
  readonly auth: RouteAuth | undefined;
}

/** A route of a controller as Nest declares it (no server needed: the OpenAPI generator uses these). */
export interface ControllerRoute extends RouteEntry {
  readonly controllerRef: object;
  readonly methodName: string;
}

interface Served {
  readonly routes: { method: string; path: string }[];
  readonly external: Readonly<Record<string, RouteAuth>>;
}

const served = new WeakMap<object, Served>();

/**
 * Records every route the Fastify instance registers (Nest's, the HEAD twins Fastify adds to GET routes, GraphQL's),
 * so the route table is what the server really answers, not what the code is believed to declare. Call it before
 * the app initialises. `external` gives the decisions of routes registered outside Nest's controllers, by path.
 */
export function recordServedRoutes(fastify: FastifyInstance, external: Readonly<Record<string, RouteAuth>>): void {
  const record: Served = { routes: [], external };
  served.set(fastify, record);
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) record.routes.push({ method, path: route.url });
  });
}

/** Every handler of every controller, with its method, full path and decision. */
export function controllerRoutes(app: INestApplication): ControllerRoute[] {
  const reflector = new Reflector();
  const scanner = new MetadataScanner();
  const routes = new Map<string, ControllerRoute>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const bases = pathsOf(Reflect.getMetadata(PATH_METADATA, controller));
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name] as object;
        const own = Reflect.getMetadata(PATH_METADATA, handler) as unknown;
        if (own === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
        const auth = routeAuthOf(reflector, handler as never, controller);
        for (const base of bases) {
          for (const tail of pathsOf(own)) {
            const path = joinPath(base, tail);
            routes.set(`${method} ${path}`, { method, path, handler: `${controller.name}.${name}`, controllerRef: controller, methodName: name, auth });
          }
        }
      }
    }
  }
  return [...routes.values()];
}

/**
 * The routes the initialised app serves, each with its decision: Nest's from their handlers' metadata (a HEAD twin
 * takes its GET's), others from `external`. A served route found in neither is undecided.
 */
export function routeTable(app: INestApplication): RouteEntry[] {
  const record = served.get(app.getHttpAdapter().getInstance() as object);
  if (!record) throw new Error('routeTable needs an app whose routes were recorded (recordServedRoutes before init)');
  const declared = new Map(controllerRoutes(app).map((r) => [`${r.method} ${r.path}`, r]));
  return record.routes.map(({ method, path }): RouteEntry => {
    if (Object.hasOwn(record.external, path)) return { method, path, handler: 'external', auth: record.external[path] };
    const own = declared.get(`${method} ${path}`) ?? (method === 'HEAD' ? declared.get(`GET ${path}`) : undefined);
    return own ? { method, path, handler: own.handler, auth: own.auth } : { method, path, handler: 'unknown', auth: undefined };
  });
}

/** Thrown at start-up when a route has no decision: such an app must not serve (deny by default). */
export class UndecidedRouteError extends Error {
  override readonly name = 'UndecidedRouteError';
}

export function assertEveryRouteDecided(routes: readonly RouteEntry[]): void {
  const undecided = routes.filter((r) => !r.auth);
  if (undecided.length === 0) return;
  const list = undecided.map((r) => `${r.method} ${r.path} (${r.handler}: ${describeRouteAuth(r.auth)})`).join(', ');
  throw new UndecidedRouteError(
    `Routes without an authentication decision: ${list}. Mark each handler or its controller with ` +
      "@RequireScope('read' | 'write'), @AdminOnly() or @Public(reason) (apps/control-plane/src/tenancy/auth.decorators.ts).",
  );
}

function pathsOf(value: unknown): string[] {
  if (value === undefined) return [''];
  return (Array.isArray(value) ? value : [value]).map(String);
}

/** Nest's join of controller and handler paths: one slash between non-empty parts, none at the end. */
function joinPath(base: string, tail: string): string {
  const parts = [base, tail].map((p) => p.replace(/^\/+|\/+$/g, '')).filter((p) => p.length > 0);
  return `/${parts.join('/')}`;
}

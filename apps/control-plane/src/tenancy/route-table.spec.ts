import 'reflect-metadata';
import { Controller, Get, Module, Post, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { NestFactory, Reflector } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { WeirConfig } from '@weir/config';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiKeyAuthenticator } from './api-key.authenticator';
import { AdminOnly, Public, RequireScope } from './auth.decorators';
import type { ApiRateLimiter } from '../rate-limits/api-rate-limiter';
import { AuthGuard } from './auth.guard';
import { ForbiddenProblem, UnauthorizedProblem } from './auth.problems';
import { describeRouteAuth } from './route-auth';
import { assertEveryRouteDecided, recordServedRoutes, routeTable, UndecidedRouteError } from './route-table';

@RequireScope('read')
@Controller('v1/things')
class ThingsController {
  @Get()
  list(): string[] {
    return [];
  }

  @Post()
  @RequireScope('write')
  create(): void {}

  @Get('open')
  @Public('a test of a handler that overrides its controller')
  open(): void {}
}

@AdminOnly()
@Controller('v1/fleet')
class FleetController {
  @Get(':id')
  get(): void {}
}

@Controller('v1/forgotten')
class ForgottenController {
  @Get()
  list(): void {}
}

@Module({ controllers: [ThingsController, FleetController] })
class DecidedModule {}

@Module({ controllers: [ThingsController, ForgottenController] })
class UndecidedModule {}

describe('the route table', () => {
  let app: INestApplication | undefined;
  afterEach(() => app?.close());

  async function boot(module: new () => unknown): Promise<INestApplication> {
    const adapter = new FastifyAdapter({ logger: false });
    recordServedRoutes(adapter.getInstance(), { '/external': { kind: 'public', reason: 'registered outside Nest' } });
    adapter.getInstance().post('/external', () => 'ok');
    app = await NestFactory.create(module, adapter, { logger: false });
    await app.init();
    return app;
  }

  it('lists every served route with its decision: the handler mark over the controller, HEAD as its GET, external by path', async () => {
    const table = routeTable(await boot(DecidedModule));
    expect(table.map((r) => `${r.method} ${r.path} ${describeRouteAuth(r.auth)}`).sort()).toEqual([
      'GET /v1/fleet/:id admin',
      'GET /v1/things tenant:read',
      'GET /v1/things/open public',
      'HEAD /v1/fleet/:id admin',
      'HEAD /v1/things tenant:read',
      'HEAD /v1/things/open public',
      'POST /external public',
      'POST /v1/things tenant:write',
    ]);
    expect(() => assertEveryRouteDecided(table)).not.toThrow();
  });

  it('refuses an app with a route that has no decision, naming it and what to add', async () => {
    const table = routeTable(await boot(UndecidedModule));
    expect(() => assertEveryRouteDecided(table)).toThrow(UndecidedRouteError);
    expect(() => assertEveryRouteDecided(table)).toThrow(/GET \/v1\/forgotten \(ForgottenController\.list: undecided\).*@RequireScope/);
  });
});

describe('AuthGuard', () => {
  const principal = (scope: 'read' | 'write') => ({ tenantId: 't1', keyId: 'k1', scopes: scope === 'write' ? ['read', 'write'] : ['read'] });
  const authenticator = {
    authenticate: (token: string) => (token.startsWith('read') ? principal('read') : token.startsWith('write') ? principal('write') : Promise.reject(new UnauthorizedProblem('unknown'))),
  } as unknown as ApiKeyAuthenticator;
  const noLimits = { admit: () => Promise.resolve() } as unknown as ApiRateLimiter;
  const guard = (adminToken?: string) => new AuthGuard(new Reflector(), authenticator, { WEIR_ADMIN_TOKEN: adminToken } as WeirConfig, noLimits);

  function context(controller: object, handler: string, authorization?: string) {
    const headers: Record<string, string> = {};
    const request = { headers: authorization ? { authorization } : {}, method: 'GET' } as Record<string, unknown>;
    const reply = { header: (name: string, value: string) => void (headers[name] = value) };
    const ctx = {
      getType: () => 'http',
      getClass: () => controller,
      getHandler: () => (controller as { prototype: Record<string, unknown> }).prototype[handler],
      switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }),
    } as unknown as ExecutionContext;
    return { ctx, request, headers };
  }

  it('refuses a handler without a decision, whatever it is sent', async () => {
    await expect(guard('admin-token').canActivate(context(ForgottenController, 'list', 'Bearer write-key').ctx)).rejects.toThrow(/no authentication decision/);
  });

  it('lets a public handler through without a credential, even inside a tenant controller', async () => {
    await expect(guard().canActivate(context(ThingsController, 'open').ctx)).resolves.toBe(true);
  });

  it("demands the handler's scope, and a tenant key never opens an admin route", async () => {
    const write = context(ThingsController, 'create', 'Bearer read-key');
    await expect(guard().canActivate(write.ctx)).rejects.toBeInstanceOf(ForbiddenProblem);
    const ok = context(ThingsController, 'create', 'Bearer write-key');
    await expect(guard().canActivate(ok.ctx)).resolves.toBe(true);
    expect(ok.request.principal).toMatchObject({ tenantId: 't1' });
    const admin = context(FleetController, 'get', 'Bearer write-key');
    await expect(guard('admin-token').canActivate(admin.ctx)).rejects.toBeInstanceOf(UnauthorizedProblem);
    expect(admin.headers['WWW-Authenticate']).toBe('Bearer realm="weir"');
    await expect(guard().canActivate(context(FleetController, 'get', 'Bearer admin-token').ctx)).rejects.toBeInstanceOf(ForbiddenProblem);
    await expect(guard('admin-token').canActivate(context(FleetController, 'get', 'Bearer admin-token').ctx)).resolves.toBe(true);
  });
});

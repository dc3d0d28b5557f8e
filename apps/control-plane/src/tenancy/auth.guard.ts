import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { WeirConfig } from '@weir/config';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { WEIR_CONFIG } from '../control-plane-options';
import { pathOf } from '../logging/request-hooks';
import { AdminTokenVerifier } from './admin-token';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { ADMIN_ONLY, IS_PUBLIC, REQUIRED_SCOPE, type AuthenticatedRequest } from './auth.decorators';
import { ForbiddenProblem, UnauthorizedProblem } from './auth.problems';
import type { Scope } from './principal';

type HttpRequest = FastifyRequest & AuthenticatedRequest;

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const MAX_TOKEN_LENGTH = 512;

/**
 * The global guard. Every REST route under /v1 needs `Authorization: Bearer <API key>` unless marked @Public();
 * @AdminOnly() routes need the platform admin token instead. Other paths (/health) and non-HTTP contexts (GraphQL
 * authenticates in its own context with ApiKeyAuthenticator) pass through.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly admin: AdminTokenVerifier;

  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: ApiKeyAuthenticator,
    @Inject(WEIR_CONFIG) config: WeirConfig,
  ) {
    this.admin = new AdminTokenVerifier(config.WEIR_ADMIN_TOKEN);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<HttpRequest>();
    const targets = [context.getHandler(), context.getClass()];
    if (!isApiPath(pathOf(request.url)) || this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    try {
      const token = bearerToken(request.headers.authorization);
      if (this.reflector.getAllAndOverride<boolean>(ADMIN_ONLY, targets)) {
        if (!this.admin.enabled) throw new ForbiddenProblem('Platform administration is disabled: WEIR_ADMIN_TOKEN is not set');
        if (!this.admin.matches(token)) throw new UnauthorizedProblem('This route needs the platform admin token');
        request.platformAdmin = true;
        return true;
      }
      const principal = await this.authenticator.authenticate(token);
      const needed = this.reflector.getAllAndOverride<Scope>(REQUIRED_SCOPE, targets) ?? (READ_METHODS.has(request.method) ? 'read' : 'write');
      if (!principal.scopes.includes(needed)) {
        throw new ForbiddenProblem(`This call needs an API key with the '${needed}' scope; this key has ${principal.scopes.join(', ')}`);
      }
      request.principal = principal;
      return true;
    } catch (err) {
      if (err instanceof UnauthorizedProblem) reply.header('WWW-Authenticate', 'Bearer realm="weir"');
      throw err;
    }
  }
}

function isApiPath(path: string): boolean {
  return path === '/v1' || path.startsWith('/v1/');
}

function bearerToken(header: string | string[] | undefined): string {
  if (typeof header !== 'string' || !header) throw new UnauthorizedProblem('Missing Authorization: Bearer <API key>');
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match || match[1].length > MAX_TOKEN_LENGTH) throw new UnauthorizedProblem('The Authorization header must be "Bearer <API key>"');
  return match[1];
}

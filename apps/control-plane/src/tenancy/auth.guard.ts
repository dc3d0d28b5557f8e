import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { WeirConfig } from '@weir/config';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { WEIR_CONFIG } from '../control-plane-options';
import { ApiRateLimiter } from '../rate-limits/api-rate-limiter';
import { AdminTokenVerifier } from './admin-token';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import type { AuthenticatedRequest } from './auth.decorators';
import { ForbiddenProblem, UnauthorizedProblem } from './auth.problems';
import { routeAuthOf } from './route-auth';

type HttpRequest = FastifyRequest & AuthenticatedRequest;

const MAX_TOKEN_LENGTH = 512;

/**
 * The global guard. What a request must present follows from the handler the router matched (its @Public,
 * @AdminOnly or @RequireScope mark, or its controller's), never from the text of the URL: the router decodes and
 * normalises paths before matching, so any test on the raw URL can be spelled around. A handler without a decision
 * is refused (and the app does not start with one: route-table.ts). GraphQL resolvers authenticate in their own
 * context (graphql/graphql-auth.ts), so non-HTTP contexts pass here. A tenant's request is counted against its key's
 * and its tenant's rate limits (rate-limits/) as soon as the key is known.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly admin: AdminTokenVerifier;

  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: ApiKeyAuthenticator,
    @Inject(WEIR_CONFIG) config: WeirConfig,
    private readonly rateLimits: ApiRateLimiter,
  ) {
    this.admin = new AdminTokenVerifier(config.WEIR_ADMIN_TOKEN);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const auth = routeAuthOf(this.reflector, context.getHandler(), context.getClass());
    if (!auth) throw new Error(`${context.getClass().name}.${context.getHandler().name} has no authentication decision: refused`);
    if (auth.kind === 'public') return true;
    const request = context.switchToHttp().getRequest<HttpRequest>();
    try {
      const token = bearerToken(request.headers.authorization);
      if (auth.kind === 'admin') {
        if (!this.admin.enabled) throw new ForbiddenProblem('Platform administration is disabled: WEIR_ADMIN_TOKEN is not set');
        if (!this.admin.matches(token)) throw new UnauthorizedProblem('This route needs the platform admin token');
        request.platformAdmin = true;
        return true;
      }
      const principal = await this.authenticator.authenticate(token);
      // Counted once the key is known, before its scope is checked: refused calls cost the server too. 429 when over.
      await this.rateLimits.admit(principal);
      if (!principal.scopes.includes(auth.scope)) {
        throw new ForbiddenProblem(`This call needs an API key with the '${auth.scope}' scope; this key has ${principal.scopes.join(', ')}`);
      }
      request.principal = principal;
      return true;
    } catch (err) {
      if (err instanceof UnauthorizedProblem) context.switchToHttp().getResponse<FastifyReply>().header('WWW-Authenticate', 'Bearer realm="weir"');
      throw err;
    }
  }
}

function bearerToken(header: string | string[] | undefined): string {
  if (typeof header !== 'string' || !header) throw new UnauthorizedProblem('Missing Authorization: Bearer <API key>');
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match || match[1].length > MAX_TOKEN_LENGTH) throw new UnauthorizedProblem('The Authorization header must be "Bearer <API key>"');
  return match[1];
}

import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { GraphQLError } from 'graphql';
import type { ApiKeyAuthenticator, Principal, Scope } from '../tenancy';
import { UnauthorizedProblem } from '../tenancy';
import type { RequestLoaders } from './loaders/request-loaders';
import { graphqlRuntime } from './graphql-runtime';

/** The caller, or why there is none. */
export interface GraphqlAuth {
  readonly principal?: Principal;
  readonly authError?: GraphQLError;
}

/** What every resolver's context holds: the caller, and the operation's own loaders (loaders/request-loaders.ts). */
export interface GraphqlContext extends GraphqlAuth {
  readonly loaders: RequestLoaders;
}

const MAX_TOKEN_LENGTH = 512;

/** `Bearer <key>` (HTTP header or graphql-ws connectionParams.authorization); a bare key is accepted over ws. */
export function tokenOf(value: unknown, allowBare: boolean): string | undefined {
  if (typeof value !== 'string' || !value || value.length > MAX_TOKEN_LENGTH + 7) return undefined;
  const match = /^Bearer +(\S+) *$/i.exec(value);
  if (match) return match[1];
  return allowBare && /^\S+$/.test(value) ? value : undefined;
}

export function unauthenticated(message: string): GraphQLError {
  return new graphqlRuntime.GraphQLError(message, { extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } } });
}

export function authUnavailable(): GraphQLError {
  return new graphqlRuntime.GraphQLError('The API key cannot be checked right now; retry later', { extensions: { code: 'SERVICE_UNAVAILABLE' } });
}

/**
 * Authenticates a token for the GraphQL context. Never throws: an invalid key becomes an UNAUTHENTICATED
 * `authError`, a failure to check it (Postgres down) a SERVICE_UNAVAILABLE one, answered by the first field that
 * needs a principal (so the internal error never reaches the caller).
 */
export async function authenticateContext(authenticator: ApiKeyAuthenticator, token: string | undefined): Promise<GraphqlAuth> {
  if (!token) return { authError: unauthenticated('Missing API key: send Authorization: Bearer <API key>') };
  try {
    return { principal: await authenticator.authenticate(token) };
  } catch (err) {
    return { authError: err instanceof UnauthorizedProblem ? unauthenticated(err.detail) : authUnavailable() };
  }
}

/** The authenticated caller of a field, which must hold `scope`; UNAUTHENTICATED or FORBIDDEN otherwise. */
export const Caller = createParamDecorator((scope: Scope, ctx: ExecutionContext): Principal => {
  const context = GqlExecutionContext.create(ctx).getContext<GraphqlContext>();
  if (!context.principal) throw context.authError ?? unauthenticated('Missing API key');
  if (!context.principal.scopes.includes(scope)) {
    throw new graphqlRuntime.GraphQLError(`This field needs an API key with the '${scope}' scope; this key has ${context.principal.scopes.join(', ')}`, {
      extensions: { code: 'FORBIDDEN', http: { status: 403 } },
    });
  }
  return context.principal;
});

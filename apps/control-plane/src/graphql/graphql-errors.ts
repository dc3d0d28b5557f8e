import { HttpException } from '@nestjs/common';
import { unwrapResolverError } from '@apollo/server/errors';
import { DatabaseUnavailableError } from '@weir/db';
import type { GraphQLError, GraphQLFormattedError } from 'graphql';
import type { Logger } from 'pino';
import { ProblemException } from '../problems/problem.exception';
import { QUERY_LIMIT_EXCEEDED, tokenLimitError } from './graphql-limits';
import { graphqlRuntime } from './graphql-runtime';
import { EventsUnavailableError } from '../events/redis-pubsub';

const CODE_BY_STATUS: Record<number, string> = {
  400: 'BAD_USER_INPUT',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  429: 'TOO_MANY_REQUESTS',
};

/**
 * One error shape for GraphQL, mirroring the REST problem details: `extensions.code` (BAD_USER_INPUT,
 * UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, CONFLICT, SERVICE_UNAVAILABLE, INTERNAL_SERVER_ERROR), for invalid input
 * `extensions.errors: [{ argument, reason }]`, never a stack trace. Apollo applies it over HTTP; graphql-ws results
 * go through formatExecutionErrors. Unexpected errors are logged whole and answered with
 * a generic message.
 */
export function formatGraphqlError(logger: Logger): (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError {
  return (formatted, error) => {
    const original = unwrapResolverError(error);
    const base = { message: formatted.message, locations: formatted.locations, path: formatted.path };
    if (original instanceof ProblemException) {
      const code = CODE_BY_STATUS[original.status] ?? (original.status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST');
      if (original.errors) {
        // Invalid input: name the GraphQL argument (or input field), not the REST parameter the schema was shared with.
        const errors = original.errors.map((e) => ({ argument: e.name, reason: e.reason }));
        const message = `Invalid ${errors.map((e) => `argument '${e.argument}': ${e.reason}`).join('; ')}`;
        return { ...base, message, extensions: { code, status: original.status, errors } };
      }
      return { ...base, message: original.detail, extensions: { code, status: original.status } };
    }
    if (original instanceof HttpException && original.getStatus() < 500) {
      const status = original.getStatus();
      return { ...base, message: original.message, extensions: { code: CODE_BY_STATUS[status] ?? 'BAD_REQUEST', status } };
    }
    if (original instanceof DatabaseUnavailableError || original instanceof EventsUnavailableError) {
      return { ...base, message: 'A service the control plane depends on is unavailable; retry later', extensions: { code: 'SERVICE_UNAVAILABLE', status: 503 } };
    }
    if (original instanceof graphqlRuntime.GraphQLError) {
      // Parse, validation and coercion errors, and the ones resolvers raise on purpose: their message is for the caller.
      const { stacktrace: _stack, http: _http, ...extensions } = (formatted.extensions ?? {}) as Record<string, unknown>;
      // An operation over one of the limits (graphql-limits.ts): graphql-js's parser stops at maxTokens with a
      // syntax error, and Apollo files the validation rules' errors under GRAPHQL_VALIDATION_FAILED; both say which.
      const tokens = extensions.code === 'GRAPHQL_PARSE_FAILED' ? tokenLimitError(formatted) : undefined;
      if (tokens) {
        const { http: _h, ...limit } = tokens.extensions;
        return { message: tokens.message, extensions: limit };
      }
      if (typeof extensions.limit === 'string') return { ...base, extensions: { ...extensions, code: QUERY_LIMIT_EXCEEDED } };
      return { ...base, extensions: { code: 'INTERNAL_SERVER_ERROR', ...extensions } };
    }
    logger.error({ err: original, path: formatted.path }, 'unexpected GraphQL error');
    return { ...base, message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  };
}

/** graphql-ws executes outside Apollo: its results' errors are formatted here the same way. */
export function formatExecutionErrors(
  format: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError,
  errors: readonly GraphQLError[],
): GraphQLFormattedError[] {
  return errors.map((error) => format(error.toJSON(), error));
}

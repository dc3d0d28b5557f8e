import { HttpException } from '@nestjs/common';
import { DatabaseUnavailableError } from '@weir/db';
import type { GraphQLFormattedError } from 'graphql';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { InvalidRequestProblem, NotFoundProblem } from '../problems/problem.exception';
import { formatGraphqlError } from './graphql-errors';
import { graphqlRuntime } from './graphql-runtime';

const logged: string[] = [];
const format = formatGraphqlError(pino({ level: 'error' }, { write: (line: string) => void logged.push(line) }));

/** What graphql-js hands formatError for an error thrown in a resolver. */
function fromResolver(original: unknown): [GraphQLFormattedError, unknown] {
  const error = graphqlRuntime.locatedError(original, undefined, ['field']);
  return [error.toJSON(), error];
}

describe('formatGraphqlError', () => {
  it('maps problems to codes and keeps their message; invalid input names each argument', () => {
    expect(format(...fromResolver(new NotFoundProblem('SLO', 'x')))).toMatchObject({
      message: 'SLO "x" does not exist',
      path: ['field'],
      extensions: { code: 'NOT_FOUND', status: 404 },
    });
    const invalid = format(...fromResolver(new InvalidRequestProblem([{ in: 'query', name: 'target', reason: 'must be less than 1' }])));
    expect(invalid).toMatchObject({
      message: "Invalid argument 'target': must be less than 1",
      extensions: { code: 'BAD_USER_INPUT', errors: [{ argument: 'target', reason: 'must be less than 1' }] },
    });
    expect(format(...fromResolver(new HttpException('Forbidden resource', 403))).extensions?.code).toBe('FORBIDDEN');
  });

  it('keeps deliberate GraphQL errors but strips stack traces and HTTP hints', () => {
    const error = new graphqlRuntime.GraphQLError('no key', { extensions: { code: 'UNAUTHENTICATED', http: { status: 401 }, stacktrace: ['at x'] } });
    expect(format(...fromResolver(error))).toEqual({ message: 'no key', path: ['field'], locations: undefined, extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('hides unexpected errors behind a generic message and logs them', () => {
    logged.length = 0;
    const result = format(...fromResolver(new TypeError('cannot read secret of undefined')));
    expect(result).toMatchObject({ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
    expect(JSON.stringify(result)).not.toContain('secret');
    expect(logged.join('')).toContain('cannot read secret of undefined');
    expect(format(...fromResolver(new DatabaseUnavailableError('down'))).extensions?.code).toBe('SERVICE_UNAVAILABLE');
  });
});

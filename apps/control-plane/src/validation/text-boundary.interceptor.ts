import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type { InvalidParameter } from '../problems/problem-details';
import { InvalidRequestProblem } from '../problems/problem.exception';
import { badStrings, decodeQueryComponent, textProblem } from './text';

/** What a request carries, as Fastify hands it over (`url` is the raw request target). */
export interface RequestText {
  readonly url: string;
  readonly params?: unknown;
  readonly body?: unknown;
}

const NOT_ASCII = /[^\x21-\x7e]/;

/**
 * Refuses NUL, lone surrogates and bytes that are not UTF-8 anywhere in the path, the query or a JSON body, with a
 * 400 naming each parameter, before any handler (and so any database call) runs; and NUL or lone surrogates in a
 * GraphQL resolver's arguments (BAD_USER_INPUT naming the argument). Global, after the guard: an
 * unauthenticated request is a 401 whatever it carries. A JSON body whose bytes are not UTF-8 is refused earlier, by
 * the body parser (app.ts), like malformed JSON; a path with a malformed escape by the router (framework-errors.ts).
 */
@Injectable()
export class TextBoundaryInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const type = context.getType<string>();
    const errors = type === 'http' ? textErrorsOf(context.switchToHttp().getRequest<RequestText>()) : type === 'graphql' ? graphqlTextErrors(context) : [];
    if (errors.length > 0) throw new InvalidRequestProblem(errors);
    return next.handle();
  }
}

/**
 * A resolver's arguments (root, args, context, info: index 1), once its caller is authenticated (the context holds a
 * principal): without one the field itself answers UNAUTHENTICATED, as a REST route answers 401 first.
 */
function graphqlTextErrors(context: ExecutionContext): InvalidParameter[] {
  const caller = context.getArgByIndex<{ principal?: unknown } | undefined>(2);
  return caller?.principal ? badStrings(context.getArgByIndex(1), 'body') : [];
}

export function textErrorsOf(request: RequestText): InvalidParameter[] {
  const at = request.url.indexOf('?');
  const path = at === -1 ? request.url : request.url.slice(0, at);
  const query = at === -1 ? '' : request.url.slice(at + 1);
  const errors: InvalidParameter[] = [];
  // Node hands raw bytes above 0x7e over as latin1 characters, which the router would match as such.
  if (NOT_ASCII.test(path)) errors.push({ in: 'path', name: '(path)', reason: 'must be ASCII: percent-encode other characters as UTF-8' });
  for (const [name, value] of Object.entries((request.params ?? {}) as Record<string, unknown>)) {
    const reason = typeof value === 'string' ? textProblem(value) : undefined;
    if (reason) errors.push({ in: 'path', name, reason });
  }
  errors.push(...queryErrors(query));
  errors.push(...badStrings(request.body, 'body'));
  return errors;
}

/** Each parameter of the raw query string, decoded strictly: Fastify's parser keeps or replaces what is not UTF-8. */
function queryErrors(query: string): InvalidParameter[] {
  const errors: InvalidParameter[] = [];
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = decodeQueryComponent(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decodeQueryComponent(pair.slice(eq + 1));
    const name = key !== undefined && !textProblem(key) && !NOT_ASCII.test(pair) ? key : '(query)';
    if (NOT_ASCII.test(pair)) errors.push({ in: 'query', name, reason: 'must be ASCII: percent-encode other characters as UTF-8' });
    else if (key === undefined || value === undefined) errors.push({ in: 'query', name, reason: 'is not valid percent-encoded UTF-8' });
    else {
      const reason = textProblem(key) ?? textProblem(value);
      if (reason) errors.push({ in: 'query', name, reason });
    }
  }
  return errors;
}

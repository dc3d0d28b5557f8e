/** RFC 9457 problem details: the one error shape every Weir endpoint answers with. */
export interface ProblemDetails {
  /** A URI naming the kind of problem; `about:blank` when the HTTP status says all there is. */
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail?: string;
  /** The path of the request that failed. */
  readonly instance?: string;
  /** Quote it when reporting a problem: the server's logs carry the same id. */
  readonly requestId?: string;
  /** For invalid input: each offending parameter and what was wrong with it. */
  readonly errors?: readonly InvalidParameter[];
}

export interface InvalidParameter {
  /** Where the parameter was: the query string, the path or the body. */
  readonly in: 'query' | 'path' | 'body' | 'header';
  /** The parameter's name (a dotted path inside a body). */
  readonly name: string;
  readonly reason: string;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export const PROBLEM_TYPES = {
  invalidRequest: 'urn:weir:problem:invalid-request',
  notFound: 'urn:weir:problem:not-found',
  internal: 'urn:weir:problem:internal-error',
  unavailable: 'urn:weir:problem:unavailable',
} as const;

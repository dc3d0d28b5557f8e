import { PROBLEM_TYPES, type InvalidParameter } from './problem-details';

/**
 * An error whose message is meant for the caller. Services throw these; the global filter turns them into
 * problem details. Anything that is not a ProblemException (or Nest's HttpException) becomes a generic 500.
 */
export class ProblemException extends Error {
  override readonly name: string = 'ProblemException';
  /** Response headers that belong with this problem (a 429's Retry-After); the filter sends them. */
  readonly headers?: Readonly<Record<string, string>>;
  constructor(
    readonly status: number,
    readonly type: string,
    readonly title: string,
    readonly detail: string,
    readonly errors?: readonly InvalidParameter[],
  ) {
    super(detail);
  }
}

export class InvalidRequestProblem extends ProblemException {
  override readonly name = 'InvalidRequestProblem';
  constructor(errors: readonly InvalidParameter[]) {
    super(400, PROBLEM_TYPES.invalidRequest, 'Invalid request', describe(errors), errors);
  }
}

export class NotFoundProblem extends ProblemException {
  override readonly name = 'NotFoundProblem';
  constructor(resource: string, id: string) {
    super(404, PROBLEM_TYPES.notFound, 'Not found', `${resource} ${JSON.stringify(id)} does not exist`);
  }
}

/** "Invalid query parameter 'limit': must be …" — names the parameter, so the caller knows what to fix. */
function describe(errors: readonly InvalidParameter[]): string {
  const parts = errors.map((e) => `${e.in} parameter '${e.name}': ${e.reason}`);
  return parts.length ? `Invalid ${parts.join('; ')}` : 'Invalid request';
}

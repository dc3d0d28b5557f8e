import { ProblemException } from '../problems/problem.exception';

export const AUTH_PROBLEM_TYPES = {
  unauthorized: 'urn:weir:problem:unauthorized',
  forbidden: 'urn:weir:problem:forbidden',
  quotaExceeded: 'urn:weir:problem:quota-exceeded',
} as const;

/** No credential, or one that is malformed, unknown, revoked or wrong: the caller is not told which. */
export class UnauthorizedProblem extends ProblemException {
  override readonly name = 'UnauthorizedProblem';
  constructor(detail: string) {
    super(401, AUTH_PROBLEM_TYPES.unauthorized, 'Unauthorized', detail);
  }
}

/** Authenticated, but the key's scope (or the deployment's configuration) does not allow this call. */
export class ForbiddenProblem extends ProblemException {
  override readonly name = 'ForbiddenProblem';
  constructor(detail: string) {
    super(403, AUTH_PROBLEM_TYPES.forbidden, 'Forbidden', detail);
  }
}

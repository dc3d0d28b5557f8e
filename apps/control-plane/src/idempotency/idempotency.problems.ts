import { ProblemException } from '../problems/problem.exception';

export const IDEMPOTENCY_PROBLEM_TYPES = {
  keyReused: 'urn:weir:problem:idempotency-key-reused',
  inProgress: 'urn:weir:problem:idempotency-key-in-progress',
} as const;

/** The key was used for a different request (body, path or method) within the last 24 h. */
export class IdempotencyKeyReusedProblem extends ProblemException {
  override readonly name = 'IdempotencyKeyReusedProblem';
  constructor() {
    super(
      422,
      IDEMPOTENCY_PROBLEM_TYPES.keyReused,
      'Idempotency key reused',
      'This Idempotency-Key was used for a different request in the last 24 hours; use a new key for a new request',
    );
  }
}

/** The first request with this key is still being served. */
export class IdempotencyKeyInProgressProblem extends ProblemException {
  override readonly name = 'IdempotencyKeyInProgressProblem';
  constructor() {
    super(
      409,
      IDEMPOTENCY_PROBLEM_TYPES.inProgress,
      'Request in progress',
      'A request with this Idempotency-Key is still in progress; retry once it has finished',
    );
  }
}

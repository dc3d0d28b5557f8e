import { InvalidRequestProblem } from '../problems/problem.exception';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
const ACCEPTABLE_KEY = /^[\x21-\x7e]{1,255}$/;

/** The request's Idempotency-Key: undefined when absent, 400 when it is not 1-255 printable ASCII characters. */
export function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers[IDEMPOTENCY_KEY_HEADER];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !ACCEPTABLE_KEY.test(value)) {
    throw new InvalidRequestProblem([
      { in: 'header', name: 'Idempotency-Key', reason: 'must be one value of 1-255 printable ASCII characters (a UUID, say)' },
    ]);
  }
  return value;
}

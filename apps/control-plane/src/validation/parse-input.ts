import type { z } from 'zod';
import type { InvalidParameter } from '../problems/problem-details';
import { InvalidRequestProblem } from '../problems/problem.exception';

/**
 * Validates one part of a request against a zod schema; on failure throws a 400 that names every offending
 * parameter. Schemas carry their own caller-facing messages.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: InvalidParameter['in']): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = result.error.issues.flatMap((issue): InvalidParameter[] => {
    if (issue.code === 'unrecognized_keys') {
      // Named with the object they sit in (`quotas.foo`), so a nested mistake is found where it is.
      return issue.keys.map((key) => ({ in: where, name: [...issue.path.map(String), key].join('.'), reason: 'is not a recognised parameter' }));
    }
    return [{ in: where, name: issue.path.map(String).join('.') || '(root)', reason: issue.message }];
  });
  throw new InvalidRequestProblem(errors);
}

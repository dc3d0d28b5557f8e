import type { z } from 'zod';
import { ProtocolValidationError } from './errors';

/** Parses a message, or throws one error listing every problem with its path. */
export function parseMessage<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  const summary = issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ');
  throw new ProtocolValidationError(`invalid ${what}: ${summary}`, issues);
}

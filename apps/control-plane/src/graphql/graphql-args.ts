import { z } from 'zod';
import { decodeCursor, InvalidCursorError } from '../pagination/cursor';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../pagination/page-query';
import { resourceIdSchema } from '../slos/dto/slo.schemas';
import { parseInput } from '../validation/parse-input';

/** GraphQL page arguments: `limit` (1-200, default 50) and an opaque `cursor`, as REST lists take them. */
export const pageArgsSchema = z.object({
  limit: z
    .number()
    .int()
    .min(1, `must be an integer from 1 to ${MAX_PAGE_SIZE}`)
    .max(MAX_PAGE_SIZE, `must be an integer from 1 to ${MAX_PAGE_SIZE}`)
    .nullish()
    .transform((v) => v ?? DEFAULT_PAGE_SIZE),
  cursor: z
    .string()
    .nullish()
    .transform((cursor, ctx) => {
      if (cursor === undefined || cursor === null) return undefined;
      try {
        return decodeCursor(cursor);
      } catch (err) {
        if (!(err instanceof InvalidCursorError)) throw err;
        ctx.addIssue({ code: 'custom', message: err.message });
        return z.NEVER;
      }
    }),
});

/** Validates GraphQL arguments; a failure is BAD_USER_INPUT naming each argument (extensions.errors). */
export function parseArgs<S extends z.ZodType>(schema: S, args: unknown): z.infer<S> {
  return parseInput(schema, args, 'query');
}

export function parseId(name: string, value: unknown): string {
  return parseArgs(z.object({ [name]: resourceIdSchema }), { [name]: value })[name] as string;
}

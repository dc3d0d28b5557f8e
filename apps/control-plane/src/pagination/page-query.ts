import { z } from 'zod';
import { decodeCursor, InvalidCursorError } from './cursor';

export const MAX_PAGE_SIZE = 200;
export const DEFAULT_PAGE_SIZE = 50;

const limitMessage = `must be an integer from 1 to ${MAX_PAGE_SIZE}`;

/** `limit` and `cursor`, as every list endpoint takes them; query values arrive as strings. */
export const pageQueryShape = {
  limit: z
    .string({ error: limitMessage })
    .regex(/^\d{1,4}$/, limitMessage)
    .transform(Number)
    .pipe(z.number().int().min(1, limitMessage).max(MAX_PAGE_SIZE, limitMessage))
    .optional()
    .transform((v) => v ?? DEFAULT_PAGE_SIZE),
  cursor: z
    .string({ error: 'must be a single cursor string' })
    .optional()
    .transform((cursor, ctx) => {
      if (cursor === undefined) return undefined;
      try {
        return decodeCursor(cursor);
      } catch (err) {
        if (!(err instanceof InvalidCursorError)) throw err;
        ctx.addIssue({ code: 'custom', message: err.message });
        return z.NEVER;
      }
    }),
};

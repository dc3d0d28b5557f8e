import { z } from 'zod';
import { textProblem } from '../validation/text';

/**
 * Keyset pagination: a cursor names the last item of the previous page, so pages stay stable while rows are
 * added or removed. The cursor is opaque to callers (base64url JSON, versioned) so its content can change.
 */
const cursorSchema = z.strictObject({ v: z.literal(1), after: z.string().min(1).max(512).refine((after) => !textProblem(after)) });
/** Fatal: a forged cursor's bytes that are not UTF-8 must not become U+FFFD and reach a query as a key. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

export class InvalidCursorError extends Error {
  override readonly name = 'InvalidCursorError';
}

export function encodeCursor(after: string): string {
  return Buffer.from(JSON.stringify({ v: 1, after }), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): string {
  if (!/^[A-Za-z0-9_-]{1,1024}$/.test(cursor)) throw new InvalidCursorError('is not a cursor returned by this API');
  let payload: unknown;
  try {
    payload = JSON.parse(utf8.decode(Buffer.from(cursor, 'base64url')));
  } catch {
    throw new InvalidCursorError('is not a cursor returned by this API');
  }
  const parsed = cursorSchema.safeParse(payload);
  if (!parsed.success) throw new InvalidCursorError('is not a cursor returned by this API');
  return parsed.data.after;
}

export interface Page<T> {
  readonly items: readonly T[];
  /** Pass it as `cursor` to get the next page; null on the last page. */
  readonly nextCursor: string | null;
}

/**
 * Builds a page from `limit + 1` rows fetched in key order: the extra row only tells whether a next page exists.
 */
export function toPage<T>(rows: readonly T[], limit: number, keyOf: (row: T) => string): Page<T> {
  const items = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return { items, nextCursor: hasMore && items.length ? encodeCursor(keyOf(items[items.length - 1])) : null };
}

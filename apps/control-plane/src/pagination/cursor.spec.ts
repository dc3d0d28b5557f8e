import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodeCursor, encodeCursor, InvalidCursorError, toPage } from './cursor';
import { DEFAULT_PAGE_SIZE, pageQueryShape } from './page-query';

describe('cursor', () => {
  it('round-trips any key, including unicode and separators', () => {
    for (const key of ['worker-1', 'a.b_c-d', 'ключ', '{"json":true}']) expect(decodeCursor(encodeCursor(key))).toBe(key);
  });

  it('is opaque base64url', () => {
    expect(encodeCursor('worker-1')).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('rejects what it did not produce', () => {
    const forged = Buffer.from(JSON.stringify({ v: 2, after: 'x' })).toString('base64url');
    const extra = Buffer.from(JSON.stringify({ v: 1, after: 'x', admin: true })).toString('base64url');
    for (const bad of ['', 'not base64!', Buffer.from('not json').toString('base64url'), forged, extra, 'a'.repeat(2000)]) {
      expect(() => decodeCursor(bad), bad).toThrow(InvalidCursorError);
    }
  });
});

describe('toPage', () => {
  const rows = ['a', 'b', 'c'];

  it('returns a cursor after the last item when an extra row shows more exist', () => {
    const page = toPage(rows, 2, (r) => r);
    expect(page.items).toEqual(['a', 'b']);
    expect(decodeCursor(page.nextCursor!)).toBe('b');
  });

  it('returns no cursor on the last page', () => {
    expect(toPage(rows, 3, (r) => r).nextCursor).toBeNull();
    expect(toPage([], 3, (r: string) => r)).toEqual({ items: [], nextCursor: null });
  });
});

describe('page query', () => {
  const schema = z.strictObject(pageQueryShape);

  it('defaults the limit and decodes the cursor', () => {
    expect(schema.parse({})).toEqual({ limit: DEFAULT_PAGE_SIZE, cursor: undefined });
    expect(schema.parse({ limit: '10', cursor: encodeCursor('w-3') })).toEqual({ limit: 10, cursor: 'w-3' });
  });

  it.each([['0'], ['201'], ['abc'], ['1.5'], ['-1'], [''], [['1', '2']]])('rejects limit %j with a message', (limit) => {
    const result = schema.safeParse({ limit });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0].path).toEqual(['limit']);
    expect(result.error!.issues[0].message).toBe('must be an integer from 1 to 200');
  });

  it('rejects a forged cursor on the cursor parameter', () => {
    const result = schema.safeParse({ cursor: 'bogus!' });
    expect(result.error!.issues[0].path).toEqual(['cursor']);
  });
});

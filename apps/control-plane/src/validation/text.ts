import type { InvalidParameter } from '../problems/problem-details';

/**
 * Text Postgres cannot store faithfully: NUL (text and jsonb refuse U+0000, a 500 if it gets that far) and lone
 * UTF-16 surrogates (a JSON `"\ud800"` escape; UTF-8 has no form for them, so the driver would store U+FFFD
 * instead). Everything a request carries is checked for both before a handler runs (text-boundary.interceptor.ts).
 */
export function textProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (LONE_SURROGATE.test(value)) return 'is not valid Unicode: it holds a lone surrogate (U+D800–U+DFFF), which has no UTF-8 form';
  return undefined;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const MAX_DEPTH = 64;

/**
 * Every string of a parsed value (object keys included) that `problem` finds fault with, named as the body's
 * validation names fields: `quotas.name`, `rules[0].id`. A key at fault is named by its parent (the key itself is
 * the bad text).
 */
export function badStrings(
  value: unknown,
  where: InvalidParameter['in'],
  problem: (text: string) => string | undefined = textProblem,
  name = '',
  depth = 0,
): InvalidParameter[] {
  if (typeof value === 'string') {
    const reason = problem(value);
    return reason ? [{ in: where, name: name || '(root)', reason }] : [];
  }
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return [];
  if (Array.isArray(value)) return value.flatMap((item, i) => badStrings(item, where, problem, `${name}[${i}]`, depth + 1));
  return Object.entries(value).flatMap(([key, item]) => {
    const keyReason = problem(key);
    const at = name ? `${name}.${key}` : key;
    if (keyReason) return [{ in: where, name: name || '(root)', reason: `has a field name that ${keyReason}` }];
    return badStrings(item, where, problem, at, depth + 1);
  });
}

/**
 * The strings of a JSON body that held bytes that are not UTF-8. The body is decoded with replacement characters
 * only to find where they were: a U+FFFD there marks the spot (one the client really sent as U+FFFD is named too,
 * which is harmless: the body is refused either way).
 */
export function invalidUtf8Fields(body: Buffer): InvalidParameter[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return [{ in: 'body', name: '(root)', reason: 'is not valid UTF-8 (and not valid JSON either)' }];
  }
  const found = badStrings(parsed, 'body', (text) => (text.includes('\ufffd') ? 'is not valid UTF-8: send text as UTF-8 bytes' : undefined));
  return found.length ? found : [{ in: 'body', name: '(root)', reason: 'is not valid UTF-8: send text as UTF-8 bytes' }];
}

/**
 * Decodes one component of a query string (`+` is a space) as UTF-8, strictly: undefined when an escape is
 * malformed or its bytes are not UTF-8 (decodeURIComponent throws on both; Fastify's parser would keep the raw
 * text or replace the bytes).
 */
export function decodeQueryComponent(component: string): string | undefined {
  try {
    return decodeURIComponent(component.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

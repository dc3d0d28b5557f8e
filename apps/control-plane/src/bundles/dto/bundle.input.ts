import { z } from 'zod';
import { pageQueryShape } from '../../pagination/page-query';
import { textProblem } from '../../validation/text';

const NAME = z.string().regex(/^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/, 'must be a bundle name (a slug)');

export const listBundlesQuerySchema = z.strictObject({ ...pageQueryShape, name: NAME.optional() });
export const bundleIdParamsSchema = z.object({ id: z.string().regex(/^b[a-f0-9]{24}$/, 'is not a bundle id') });
export const bundleVersionParamsSchema = z.object({
  name: NAME,
  version: z.string().min(1, 'must be a version').max(64, 'must be at most 64 characters'),
});

/** The list cursor holds the last (name, version). */
export function encodeBundleKey(name: string, version: string): string {
  return JSON.stringify([name, version]);
}

export function decodeBundleKey(after: string | undefined): readonly [string, string] | undefined {
  if (after === undefined) return undefined;
  // The cursor's text is clean, but its JSON may still escape a NUL (`\u0000`): checked once parsed.
  const part = z.string().refine((text) => !textProblem(text));
  const parsed = z.tuple([part, part]).safeParse(safeJson(after));
  return parsed.success ? parsed.data : undefined;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}


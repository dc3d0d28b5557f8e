import { z } from 'zod';

/**
 * A write in progress, stored at `pending/<name>.json` before anything is uploaded and removed once the manifest
 * is written. Retention reads these: while a writer is still choosing its base checkpoint (`base: 'choosing'`)
 * nothing is dropped; once it has chosen, that base is kept; and no shared file younger than the oldest pending
 * write's start is deleted (it may be one the writer has uploaded but not yet named in a manifest).
 */
export const pendingMarkerSchema = z.object({
  startedAt: z.number(),
  base: z.union([z.literal('choosing'), z.number().int().nonnegative(), z.null()]),
});

export type PendingMarker = z.infer<typeof pendingMarkerSchema>;

export function encodeMarker(marker: PendingMarker): Buffer {
  return Buffer.from(JSON.stringify(marker), 'utf8');
}

/** A marker that cannot be read is treated as a write choosing its base: the safe reading. */
export function decodeMarker(bytes: Buffer, fallbackStartedAt: number): PendingMarker {
  try {
    return pendingMarkerSchema.parse(JSON.parse(bytes.toString('utf8')));
  } catch {
    return { startedAt: fallbackStartedAt, base: 'choosing' };
  }
}

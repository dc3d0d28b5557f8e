import { z } from 'zod';
import { ManifestFormatError, ManifestVersionError } from '../errors';

/**
 * The manifest of a checkpoint or savepoint, format "weir.checkpoint" version 1: the only object that makes a
 * checkpoint exist (it is written last). It names every file by content (sha256 and size) under `sharedPrefix`;
 * the files themselves are opaque here: RocksDB files or a memory image for keyed state (`backend` says which),
 * and engine metadata blobs (timers, broadcast state, source offsets) under names the engine chooses.
 *
 * Compatibility rule: readers accept their own version and older ones; a manifest of a newer version is refused
 * with ManifestVersionError (never half-read). Additive changes that old readers may ignore keep the version.
 */
export const MANIFEST_FORMAT = 'weir.checkpoint';
export const MANIFEST_VERSION = 1;

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex sha256');
const fileName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/, 'a plain file name');
const count = z.number().int().nonnegative();

const fileRefSchema = z.object({ name: fileName, sha256, size: count });

const keyGroupRangeSchema = z
  .object({ start: count, end: count })
  .refine((r) => r.start <= r.end, 'key group range start must be ≤ end');

const subtaskSchema = z.object({
  subtask: count,
  /**
   * The key groups this subtask's keyed state covers, as sorted disjoint inclusive ranges (one range by default;
   * several after live key-group moves), or null for an operator without keyed state.
   */
  keyGroups: z.array(keyGroupRangeSchema).nullable(),
  backend: z.enum(['memory', 'lsm']).nullable(),
  files: z.array(fileRefSchema),
  metadata: z.array(fileRefSchema),
});

const operatorSchema = z.object({
  operatorId: z.string().min(1),
  subtasks: z.array(subtaskSchema),
});

export const manifestSchema = z.object({
  format: z.literal(MANIFEST_FORMAT),
  version: z.literal(MANIFEST_VERSION),
  kind: z.enum(['checkpoint', 'savepoint']),
  checkpointId: count,
  savepointId: z.string().nullable(),
  tenantId: z.string().min(1),
  jobId: z.string().min(1),
  createdAt: z.iso.datetime(),
  maxParallelism: z.number().int().min(1).max(32768),
  /** Key prefix of the files (a savepoint restored by another job still reads its original job's files). */
  sharedPrefix: z.string().min(1),
  /** The checkpoint whose files this one reused (null: none; everything was uploaded). */
  baseCheckpointId: count.nullable(),
  operators: z.array(operatorSchema),
  /** Job-level engine metadata (routing tables, say). */
  metadata: z.array(fileRefSchema),
  stats: z.object({
    /** Bytes of every file the manifest references: the size of the state it stands for. */
    stateBytes: count,
    /** Bytes uploaded by this checkpoint (files no earlier checkpoint had). */
    uploadedBytes: count,
    uploadedFiles: count,
    reusedFiles: count,
  }),
});

export type CheckpointManifest = z.infer<typeof manifestSchema>;
export type ManifestFileRef = z.infer<typeof fileRefSchema>;
export type ManifestSubtask = z.infer<typeof subtaskSchema>;
export type ManifestOperator = z.infer<typeof operatorSchema>;

export function serializeManifest(manifest: CheckpointManifest): Buffer {
  return Buffer.from(`${JSON.stringify(manifestSchema.parse(manifest), null, 1)}\n`, 'utf8');
}

/** Parses and validates a manifest; `source` names it in errors. */
export function parseManifest(bytes: Uint8Array | string, source: string): CheckpointManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8'));
  } catch (err) {
    throw new ManifestFormatError(`${source} is not JSON: ${(err as Error).message}`);
  }
  const head = raw as { format?: unknown; version?: unknown } | null;
  if (typeof head !== 'object' || head === null || head.format !== MANIFEST_FORMAT) {
    throw new ManifestFormatError(`${source} is not a Weir checkpoint manifest (format ${String(head?.format)})`);
  }
  if (head.version !== MANIFEST_VERSION) {
    const newer = typeof head.version === 'number' && head.version > MANIFEST_VERSION;
    throw new ManifestVersionError(
      newer
        ? `${source} has manifest version ${head.version}, written by a newer Weir; this one reads up to ${MANIFEST_VERSION}`
        : `${source} has unknown manifest version ${String(head.version)}`,
    );
  }
  const parsed = manifestSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ManifestFormatError(`${source} is not a valid manifest: ${problems}`);
  }
  return parsed.data;
}

/** Every distinct file a manifest references, by sha256 (state files and metadata blobs alike). */
export function referencedFiles(manifest: CheckpointManifest): Map<string, number> {
  const files = new Map<string, number>();
  const add = (ref: ManifestFileRef) => files.set(ref.sha256, ref.size);
  manifest.metadata.forEach(add);
  for (const operator of manifest.operators) {
    for (const subtask of operator.subtasks) {
      subtask.files.forEach(add);
      subtask.metadata.forEach(add);
    }
  }
  return files;
}

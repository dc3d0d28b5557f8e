import { createReadStream, ReadStream } from 'node:fs';
import type { BlobStore } from '@weir/blob';
import type { KeyGroupRange } from '@weir/state';
import type { CheckpointPartInput, CompletedCheckpoint, WriteCheckpointCommand } from '../contract';
import { CheckpointAbortedError, InvalidCheckpointError, StaleReuseError } from '../errors';
import {
  checkCheckpointId,
  checkId,
  checkpointManifestKey,
  pendingKey,
  savepointManifestKey,
  sharedPrefix,
} from '../layout';
import {
  MANIFEST_FORMAT,
  MANIFEST_VERSION,
  referencedFiles,
  serializeManifest,
  type CheckpointManifest,
  type ManifestFileRef,
  type ManifestOperator,
} from '../manifest/manifest';
import { mapBounded } from './bounded';
import { sha256Of, sha256OfFile } from './hashing';
import { encodeMarker } from './pending-marker';

export interface WriterContext {
  readonly blob: BlobStore;
  readonly concurrency: number;
  readonly clock: () => number;
  /** The latest completed checkpoint of the job, whose files need no upload. */
  readonly latest: () => Promise<CompletedCheckpoint | null>;
  /** An existing savepoint of this id (a retried trigger returns it instead of taking a second one). */
  readonly existingSavepoint: (savepointId: string) => Promise<CompletedCheckpoint | null>;
}

/** A file to reference: where its bytes are (a local path or in memory) and what they hash to. */
interface Source {
  readonly ref: ManifestFileRef;
  readonly path?: string;
  readonly bytes?: Uint8Array;
}

/**
 * Writes a checkpoint (or savepoint): a pending marker first, then every file no earlier checkpoint uploaded
 * (content-addressed under shared/, in parallel with bounded concurrency), then the manifest LAST, so that a
 * checkpoint that failed half-way is never seen as complete; its stray uploads are collected by retention.
 */
export async function writeCheckpoint(ctx: WriterContext, command: WriteCheckpointCommand): Promise<CompletedCheckpoint> {
  validate(command);
  const job = { tenantId: command.tenantId, jobId: command.jobId };
  const savepointId = command.savepointId;
  if (savepointId !== undefined) {
    const existing = await ctx.existingSavepoint(savepointId);
    if (existing) return existing;
  }
  const startedAt = ctx.clock();
  const marker = pendingKey(job, savepointId === undefined ? `checkpoint-${command.checkpointId}` : `savepoint-${savepointId}`);
  await ctx.blob.put(marker, encodeMarker({ startedAt, base: 'choosing' }), { contentType: 'application/json' });
  try {
    const base = await ctx.latest();
    const known = new Set(base ? referencedFiles(base.manifest).keys() : []);
    await ctx.blob.put(marker, encodeMarker({ startedAt, base: base?.manifest.checkpointId ?? null }), { contentType: 'application/json' });
    const uploaded = await uploadDescribed(ctx, command, known, base?.manifest.checkpointId ?? null);
    const metadata = await uploadBlobs(ctx, job, command.metadata, known, command.signal);
    return await writeManifest(ctx, {
      ...job,
      checkpointId: command.checkpointId,
      maxParallelism: command.maxParallelism,
      operators: uploaded.operators,
      metadata,
      stats: uploaded.stats,
      baseCheckpointId: base?.manifest.checkpointId ?? null,
      ...(savepointId !== undefined ? { savepointId } : {}),
      ...(command.signal ? { signal: command.signal } : {}),
    });
  } finally {
    await ctx.blob.delete(marker).catch(() => undefined);
  }
}

/** Some parts of a checkpoint whose other parts another process writes (a job spread over several job hosts). */
export interface UploadPartsCommand {
  readonly tenantId: string;
  readonly jobId: string;
  readonly checkpointId: number;
  readonly maxParallelism: number;
  readonly parts: readonly CheckpointPartInput[];
  /** Files known to be stored (referenced by `base`): not uploaded again. */
  readonly known: ReadonlySet<string>;
  /** The completed checkpoint this process's reused files come from (retention keeps it while the marker lives). */
  readonly base: number | null;
  /** Names this writer's pending marker (unique per process: `checkpoint-<id>-<name>`). */
  readonly writer: string;
  readonly signal?: AbortSignal;
}

/** What a process stored of a checkpoint: its operators' manifest entries, and the marker that keeps them safe. */
export interface UploadedParts {
  readonly operators: ManifestOperator[];
  readonly stats: CheckpointManifest['stats'];
  /** Delete it (releaseParts) once the manifest naming these parts is written, or the checkpoint was given up. */
  readonly marker: string;
}

/**
 * Uploads parts of a checkpoint without writing its manifest: another process (the run's leader) writes one manifest
 * naming every process's parts. The pending marker stays until the caller releases it, so that retention never
 * deletes an upload that no manifest names yet.
 */
export async function uploadParts(ctx: WriterContext, command: UploadPartsCommand): Promise<UploadedParts> {
  validate(command);
  const job = { tenantId: command.tenantId, jobId: command.jobId };
  const marker = pendingKey(job, `checkpoint-${command.checkpointId}-${command.writer}`);
  await ctx.blob.put(marker, encodeMarker({ startedAt: ctx.clock(), base: command.base }), { contentType: 'application/json' });
  try {
    const uploaded = await uploadDescribed(ctx, command, command.known, command.base);
    return { ...uploaded, marker };
  } catch (err) {
    await ctx.blob.delete(marker).catch(() => undefined);
    throw err;
  }
}

export interface WriteManifestCommand {
  readonly tenantId: string;
  readonly jobId: string;
  readonly checkpointId: number;
  readonly maxParallelism: number;
  /** Every part of the checkpoint, as the processes that uploaded them described them. */
  readonly operators: readonly ManifestOperator[];
  readonly metadata?: readonly ManifestFileRef[];
  readonly stats: CheckpointManifest['stats'];
  readonly baseCheckpointId: number | null;
  readonly savepointId?: string;
  readonly signal?: AbortSignal;
}

/** Writes the manifest of parts already stored: the act that makes the checkpoint exist. */
export async function writeManifest(ctx: WriterContext, command: WriteManifestCommand): Promise<CompletedCheckpoint> {
  const job = { tenantId: command.tenantId, jobId: command.jobId };
  const savepointId = command.savepointId;
  if (savepointId !== undefined) {
    checkId('savepoint id', savepointId);
    const existing = await ctx.existingSavepoint(savepointId);
    if (existing) return existing;
  }
  const operators = mergeOperators(command.operators);
  const manifest: CheckpointManifest = {
    format: MANIFEST_FORMAT,
    version: MANIFEST_VERSION,
    kind: savepointId === undefined ? 'checkpoint' : 'savepoint',
    checkpointId: command.checkpointId,
    savepointId: savepointId ?? null,
    tenantId: command.tenantId,
    jobId: command.jobId,
    createdAt: new Date(ctx.clock()).toISOString(),
    maxParallelism: command.maxParallelism,
    sharedPrefix: sharedPrefix(job),
    baseCheckpointId: command.baseCheckpointId,
    operators,
    metadata: [...(command.metadata ?? [])],
    stats: command.stats,
  };
  if (command.signal?.aborted) {
    throw new CheckpointAbortedError(`${savepointId === undefined ? `checkpoint ${command.checkpointId}` : `savepoint ${savepointId}`} was given up`);
  }
  const key = savepointId === undefined ? checkpointManifestKey(job, command.checkpointId) : savepointManifestKey(job, savepointId);
  await ctx.blob.put(key, serializeManifest(manifest), { contentType: 'application/json' });
  return { key, manifest };
}

/** Parts from several processes as one operator list: each subtask once, no key group in two subtasks. */
function mergeOperators(operators: readonly ManifestOperator[]): ManifestOperator[] {
  const byId = new Map<string, ManifestOperator['subtasks']>();
  for (const o of operators) {
    const list = byId.get(o.operatorId) ?? [];
    list.push(...o.subtasks);
    byId.set(o.operatorId, list);
  }
  const out: ManifestOperator[] = [];
  for (const [operatorId, subtasks] of [...byId].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const sorted = [...subtasks].sort((a, b) => a.subtask - b.subtask);
    const ranges: { start: number; end: number; subtask: number }[] = [];
    for (let i = 0; i < sorted.length; i++) {
      if (i > 0 && sorted[i].subtask === sorted[i - 1].subtask) throw new InvalidCheckpointError(`two checkpoint parts for ${operatorId}/${sorted[i].subtask}`);
      for (const kg of sorted[i].keyGroups ?? []) {
        const overlap = ranges.find((r) => kg.start <= r.end && r.start <= kg.end);
        if (overlap) throw new InvalidCheckpointError(`${operatorId}/${sorted[i].subtask}: key groups ${kg.start}..${kg.end} overlap subtask ${overlap.subtask}'s`);
        ranges.push({ ...kg, subtask: sorted[i].subtask });
      }
    }
    out.push({ operatorId, subtasks: sorted });
  }
  return out;
}

/** Describes the command's parts and uploads what `known` lacks; reused files must be among `known`. */
async function uploadDescribed(
  ctx: WriterContext,
  command: Pick<WriteCheckpointCommand, 'tenantId' | 'jobId' | 'checkpointId' | 'parts' | 'signal' | 'savepointId'>,
  known: ReadonlySet<string>,
  base: number | null,
): Promise<{ operators: ManifestOperator[]; stats: CheckpointManifest['stats'] }> {
  const job = { tenantId: command.tenantId, jobId: command.jobId };
  const { operators, sources, reused } = await describeParts(command, ctx.concurrency);
  for (const { part, ref } of reused) {
    if (!known.has(ref.sha256)) {
      throw new StaleReuseError(`${part}: reused file ${ref.name} (${ref.sha256}) is not referenced by the base checkpoint ${base ?? '(none)'}`);
    }
  }
  const unique = new Map<string, Source>();
  for (const source of sources) unique.set(source.ref.sha256, source);
  const toUpload = [...unique.values()].filter((source) => !known.has(source.ref.sha256));
  const prefix = sharedPrefix(job);
  const what = command.savepointId === undefined ? `checkpoint ${command.checkpointId}` : `savepoint ${command.savepointId}`;
  await mapBounded(toUpload, ctx.concurrency, async (source) => {
    if (command.signal?.aborted) throw new CheckpointAbortedError(`${what} was given up`);
    const body = source.path ? createReadStream(source.path) : source.bytes!;
    try {
      await ctx.blob.put(prefix + source.ref.sha256, body, { contentType: 'application/octet-stream' });
    } finally {
      // A failed put may not have consumed the stream: close the file rather than leak its descriptor (and
      // ignore errors of a stream no one reads any more, such as its file vanishing meanwhile).
      if (body instanceof ReadStream) body.on('error', () => undefined).destroy();
    }
  });
  return {
    operators,
    stats: {
      stateBytes: [...unique.values()].reduce((sum, s) => sum + s.ref.size, 0),
      uploadedBytes: toUpload.reduce((sum, s) => sum + s.ref.size, 0),
      uploadedFiles: toUpload.length,
      reusedFiles: unique.size - toUpload.length,
    },
  };
}

/** Job-level blobs: stored by content like every other file. */
async function uploadBlobs(
  ctx: WriterContext,
  job: { tenantId: string; jobId: string },
  blobs: Readonly<Record<string, Uint8Array>> | undefined,
  known: ReadonlySet<string>,
  signal: AbortSignal | undefined,
): Promise<ManifestFileRef[]> {
  const entries = Object.entries(blobs ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const refs = entries.map(([name, bytes]) => ({ name, sha256: sha256Of(bytes), size: bytes.byteLength }));
  await mapBounded(entries, ctx.concurrency, async ([, bytes], i) => {
    if (signal?.aborted) throw new CheckpointAbortedError('the checkpoint was given up');
    if (!known.has(refs[i].sha256)) await ctx.blob.put(sharedPrefix(job) + refs[i].sha256, bytes, { contentType: 'application/octet-stream' });
  });
  return refs;
}

/** Hashes every file and blob of the command and lays them out as the manifest's operators. */
async function describeParts(command: Pick<WriteCheckpointCommand, 'parts'>, concurrency: number) {
  const sources: Source[] = [];
  const reused: { part: string; ref: ManifestFileRef }[] = [];
  const blobRefs = (blobs: Readonly<Record<string, Uint8Array>> | undefined): ManifestFileRef[] =>
    Object.entries(blobs ?? {})
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, bytes]) => {
        const ref = { name, sha256: sha256Of(bytes), size: bytes.byteLength };
        sources.push({ ref, bytes });
        return ref;
      });

  const localFiles = command.parts.flatMap((part) => part.state?.files ?? []);
  const hashes = await mapBounded(localFiles, concurrency, (file) => sha256OfFile(file.path));
  const hashOf = new Map(localFiles.map((file, i) => [file, hashes[i]]));

  const byOperator = new Map<string, ManifestOperator>();
  for (const part of [...command.parts].sort(byOperatorAndSubtask)) {
    let operator = byOperator.get(part.operatorId);
    if (!operator) byOperator.set(part.operatorId, (operator = { operatorId: part.operatorId, subtasks: [] }));
    const files = (part.state?.files ?? []).map((file) => {
      const { sha256, size } = hashOf.get(file)!;
      const ref = { name: file.name, sha256, size };
      sources.push({ ref, path: file.path });
      return ref;
    });
    const again = (part.reusedMetadata ?? []).map((r) => ({ name: r.name, sha256: r.sha256, size: r.size }));
    for (const ref of again) reused.push({ part: `${part.operatorId}/${part.subtask}`, ref });
    operator.subtasks.push({
      subtask: part.subtask,
      keyGroups: rangesOf(part),
      backend: part.state?.kind ?? null,
      files,
      metadata: [...blobRefs(part.metadata), ...again].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    });
  }
  // Reused files count as state (stateBytes) but are never uploaded: the base references them.
  const sourced = new Set(sources.map((s) => s.ref.sha256));
  for (const { ref } of reused) if (!sourced.has(ref.sha256)) sources.push({ ref });
  return { operators: [...byOperator.values()], sources, reused };
}

function byOperatorAndSubtask(a: CheckpointPartInput, b: CheckpointPartInput): number {
  return a.operatorId < b.operatorId ? -1 : a.operatorId > b.operatorId ? 1 : a.subtask - b.subtask;
}

function validate(command: Pick<WriteCheckpointCommand, 'tenantId' | 'jobId' | 'checkpointId' | 'savepointId' | 'maxParallelism' | 'parts'>): void {
  checkId('tenant id', command.tenantId);
  checkId('job id', command.jobId);
  checkCheckpointId(command.checkpointId);
  if (command.savepointId !== undefined) checkId('savepoint id', command.savepointId);
  const { maxParallelism } = command;
  if (!Number.isInteger(maxParallelism) || maxParallelism < 1 || maxParallelism > 32768) {
    throw new InvalidCheckpointError(`max parallelism ${maxParallelism} must be an integer in [1, 32768]`);
  }
  const seen = new Set<string>();
  const ranges = new Map<string, { start: number; end: number; subtask: number }[]>();
  for (const part of command.parts) {
    const id = `${part.operatorId}/${part.subtask}`;
    if (!part.operatorId) throw new InvalidCheckpointError('a checkpoint part has an empty operator id');
    if (!Number.isInteger(part.subtask) || part.subtask < 0) throw new InvalidCheckpointError(`${id}: bad subtask`);
    if (seen.has(id)) throw new InvalidCheckpointError(`two checkpoint parts for ${id}`);
    seen.add(id);
    const names = new Set<string>();
    for (const file of part.state?.files ?? []) {
      if (names.has(file.name)) throw new InvalidCheckpointError(`${id}: file ${file.name} appears twice`);
      names.add(file.name);
    }
    const blobNames = new Set(Object.keys(part.metadata ?? {}));
    for (const ref of part.reusedMetadata ?? []) {
      if (blobNames.has(ref.name)) throw new InvalidCheckpointError(`${id}: metadata ${ref.name} appears twice`);
      if (!/^[0-9a-f]{64}$/.test(ref.sha256) || !Number.isInteger(ref.size) || ref.size < 0) {
        throw new InvalidCheckpointError(`${id}: reused metadata ${ref.name} needs a sha256 and a size`);
      }
      blobNames.add(ref.name);
    }
    const own = rangesOf(part);
    if (own) {
      const others = ranges.get(part.operatorId) ?? [];
      for (const kg of own) {
        if (!Number.isInteger(kg.start) || !Number.isInteger(kg.end) || kg.start < 0 || kg.end < kg.start || kg.end >= maxParallelism) {
          throw new InvalidCheckpointError(`${id}: key groups ${kg.start}..${kg.end} outside 0..${maxParallelism - 1}`);
        }
        const overlap = others.find((o) => kg.start <= o.end && o.start <= kg.end);
        if (overlap) {
          throw new InvalidCheckpointError(`${id}: key groups ${kg.start}..${kg.end} overlap subtask ${overlap.subtask}'s`);
        }
        others.push({ start: kg.start, end: kg.end, subtask: part.subtask });
      }
      ranges.set(part.operatorId, others);
    } else if (part.state) {
      throw new InvalidCheckpointError(`${id}: keyed state needs its key-group range`);
    }
  }
}

/** The part's key-group ranges, sorted by start (null without keyed state). */
function rangesOf(part: CheckpointPartInput): { start: number; end: number }[] | null {
  if (part.keyGroups === undefined) return null;
  const list: readonly KeyGroupRange[] = Array.isArray(part.keyGroups)
    ? (part.keyGroups as readonly KeyGroupRange[])
    : [part.keyGroups as KeyGroupRange];
  return list.map((r) => ({ start: r.start, end: r.end })).sort((a, b) => a.start - b.start);
}

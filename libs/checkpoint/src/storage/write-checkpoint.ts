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
  const manifestKey =
    savepointId === undefined ? checkpointManifestKey(job, command.checkpointId) : savepointManifestKey(job, savepointId);
  const startedAt = ctx.clock();
  const marker = pendingKey(job, savepointId === undefined ? `checkpoint-${command.checkpointId}` : `savepoint-${savepointId}`);
  await ctx.blob.put(marker, encodeMarker({ startedAt, base: 'choosing' }), { contentType: 'application/json' });
  try {
    const base = await ctx.latest();
    const known = new Set(base ? referencedFiles(base.manifest).keys() : []);
    const { operators, metadata, sources, reused } = await describeParts(command, ctx.concurrency);
    for (const { part, ref } of reused) {
      if (!known.has(ref.sha256)) {
        throw new StaleReuseError(
          `${part}: reused file ${ref.name} (${ref.sha256}) is not referenced by the base checkpoint ` +
            `${base ? base.manifest.checkpointId : '(none)'}`,
        );
      }
    }
    await ctx.blob.put(marker, encodeMarker({ startedAt, base: base?.manifest.checkpointId ?? null }), {
      contentType: 'application/json',
    });

    const unique = new Map<string, Source>();
    for (const source of sources) unique.set(source.ref.sha256, source);
    const toUpload = [...unique.values()].filter((source) => !known.has(source.ref.sha256));
    const prefix = sharedPrefix(job);
    const checkAborted = () => {
      if (command.signal?.aborted) {
        throw new CheckpointAbortedError(`${savepointId === undefined ? `checkpoint ${command.checkpointId}` : `savepoint ${savepointId}`} was given up`);
      }
    };
    await mapBounded(toUpload, ctx.concurrency, async (source) => {
      checkAborted();
      const body = source.path ? createReadStream(source.path) : source.bytes!;
      try {
        await ctx.blob.put(prefix + source.ref.sha256, body, { contentType: 'application/octet-stream' });
      } finally {
        // A failed put may not have consumed the stream: close the file rather than leak its descriptor (and
        // ignore errors of a stream no one reads any more, such as its file vanishing meanwhile).
        if (body instanceof ReadStream) body.on('error', () => undefined).destroy();
      }
    });

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
      sharedPrefix: prefix,
      baseCheckpointId: base?.manifest.checkpointId ?? null,
      operators,
      metadata,
      stats: {
        stateBytes: [...unique.values()].reduce((sum, s) => sum + s.ref.size, 0),
        uploadedBytes: toUpload.reduce((sum, s) => sum + s.ref.size, 0),
        uploadedFiles: toUpload.length,
        reusedFiles: unique.size - toUpload.length,
      },
    };
    checkAborted();
    await ctx.blob.put(manifestKey, serializeManifest(manifest), { contentType: 'application/json' });
    return { key: manifestKey, manifest };
  } finally {
    await ctx.blob.delete(marker).catch(() => undefined);
  }
}

/** Hashes every file and blob of the command and lays them out as the manifest's operators. */
async function describeParts(command: WriteCheckpointCommand, concurrency: number) {
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
  return { operators: [...byOperator.values()], metadata: blobRefs(command.metadata), sources, reused };
}

function byOperatorAndSubtask(a: CheckpointPartInput, b: CheckpointPartInput): number {
  return a.operatorId < b.operatorId ? -1 : a.operatorId > b.operatorId ? 1 : a.subtask - b.subtask;
}

function validate(command: WriteCheckpointCommand): void {
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

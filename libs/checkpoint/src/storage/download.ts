import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobNotFoundError, type BlobStore } from '@weir/blob';
import type { KeyGroupRange } from '@weir/state';
import type { DownloadedCheckpoint, DownloadedPart, DownloadSelection } from '../contract';
import { CorruptCheckpointError, MissingCheckpointFileError } from '../errors';
import type { CheckpointManifest, ManifestFileRef, ManifestSubtask } from '../manifest/manifest';
import { mapBounded } from './bounded';
import { readAll } from './blob-io';

export function describeCheckpoint(manifest: CheckpointManifest): string {
  return manifest.kind === 'savepoint' ? `savepoint ${manifest.savepointId}` : `checkpoint ${manifest.checkpointId}`;
}

/**
 * Downloads the selected parts of a checkpoint into `localDir/<operatorId>/<subtask>/` (state files) and into
 * memory (metadata blobs), checking every file's size and sha256 against the manifest. A file that is missing,
 * truncated or corrupt raises CorruptCheckpointError (MissingCheckpointFileError) naming it.
 */
export async function downloadCheckpoint(
  blob: BlobStore,
  manifest: CheckpointManifest,
  selections: readonly DownloadSelection[],
  localDir: string,
  concurrency: number,
): Promise<DownloadedCheckpoint> {
  const chosen = selectSubtasks(manifest, selections);
  const fetch = new FileFetcher(blob, manifest);
  const metadata = await fetch.blobs('job', manifest.metadata, concurrency);
  const parts: DownloadedPart[] = [];
  for (const { operatorId, subtask } of chosen) {
    const label = `${operatorId}/${subtask.subtask}`;
    const dir = join(localDir, operatorId, String(subtask.subtask));
    await mkdir(dir, { recursive: true });
    await mapBounded(subtask.files, concurrency, (file) => fetch.toFile(`${label}/${file.name}`, file, join(dir, file.name)));
    parts.push({
      operatorId,
      subtask: subtask.subtask,
      keyGroups: subtask.keyGroups,
      state:
        subtask.backend === null
          ? null
          : {
              kind: subtask.backend,
              dir,
              files: subtask.files.map((file) => ({ name: file.name, path: join(dir, file.name), size: file.size })),
            },
      metadata: await fetch.blobs(label, subtask.metadata, concurrency),
    });
  }
  return { manifest, parts, metadata };
}

/** The manifest's subtasks a set of selections asks for (each once). */
export function selectSubtasks(
  manifest: CheckpointManifest,
  selections: readonly DownloadSelection[],
): { operatorId: string; subtask: ManifestSubtask }[] {
  const out: { operatorId: string; subtask: ManifestSubtask }[] = [];
  const taken = new Set<string>();
  for (const selection of selections) {
    const operator = manifest.operators.find((o) => o.operatorId === selection.operatorId);
    for (const subtask of operator?.subtasks ?? []) {
      if (selection.subtasks && !selection.subtasks.includes(subtask.subtask)) continue;
      if (selection.keyGroups && !intersects(subtask.keyGroups, selection.keyGroups)) continue;
      const id = `${selection.operatorId}/${subtask.subtask}`;
      if (taken.has(id)) continue;
      taken.add(id);
      out.push({ operatorId: selection.operatorId, subtask });
    }
  }
  return out;
}

function intersects(ranges: readonly KeyGroupRange[] | null, wanted: KeyGroupRange): boolean {
  return (ranges ?? []).some((r) => r.start <= wanted.end && wanted.start <= r.end);
}

class FileFetcher {
  private readonly name: string;

  constructor(
    private readonly blob: BlobStore,
    private readonly manifest: CheckpointManifest,
  ) {
    this.name = describeCheckpoint(manifest);
  }

  async toFile(label: string, file: ManifestFileRef, path: string): Promise<void> {
    const key = this.manifest.sharedPrefix + file.sha256;
    const hash = createHash('sha256');
    let size = 0;
    const measure = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    await pipeline(await this.open(label, key), measure, createWriteStream(path));
    this.verify(label, key, file, size, hash.digest('hex'));
  }

  async blobs(label: string, refs: readonly ManifestFileRef[], concurrency: number): Promise<Record<string, Buffer>> {
    const values = await mapBounded(refs, concurrency, async (ref) => {
      const key = this.manifest.sharedPrefix + ref.sha256;
      const bytes = await readAll(await this.open(`${label}/${ref.name}`, key));
      this.verify(`${label}/${ref.name}`, key, ref, bytes.length, createHash('sha256').update(bytes).digest('hex'));
      return bytes;
    });
    return Object.fromEntries(refs.map((ref, i) => [ref.name, values[i]]));
  }

  private async open(label: string, key: string) {
    try {
      return await this.blob.get(key);
    } catch (err) {
      if (err instanceof BlobNotFoundError) {
        throw new MissingCheckpointFileError(this.name, label, key, 'is missing', { cause: err });
      }
      throw err;
    }
  }

  private verify(label: string, key: string, file: ManifestFileRef, size: number, sha256: string): void {
    if (size !== file.size) {
      const how = size < file.size ? 'truncated' : 'too long';
      throw new CorruptCheckpointError(this.name, label, key, `is ${how}: ${size} bytes, the manifest says ${file.size}`);
    }
    if (sha256 !== file.sha256) {
      throw new CorruptCheckpointError(this.name, label, key, `is corrupt: sha256 ${sha256}, the manifest says ${file.sha256}`);
    }
  }
}

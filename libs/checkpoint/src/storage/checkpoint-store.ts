import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BlobNotFoundError, type BlobStore } from '@weir/blob';
import type {
  CompletedCheckpoint,
  DownloadedCheckpoint,
  DownloadSelection,
  RestoreAttempt,
  RestoredCheckpoint,
  RetentionReport,
  StoredCheckpointRef,
  WriteCheckpointCommand,
} from '../contract';
import { CheckpointNotFoundError, CorruptCheckpointError, ManifestFormatError, NoUsableCheckpointError } from '../errors';
import {
  checkpointIdOfKey,
  checkpointsPrefix,
  pendingPrefix,
  savepointIdOfKey,
  savepointManifestKey,
  savepointsPrefix,
  sharedPrefix,
  type JobScope,
} from '../layout';
import { parseManifest, referencedFiles } from '../manifest/manifest';
import { planRetention } from '../retention/plan-retention';
import { getBytes } from './blob-io';
import { mapBounded } from './bounded';
import { downloadCheckpoint } from './download';
import { decodeMarker } from './pending-marker';
import { uploadParts, writeCheckpoint, writeManifest, type UploadedParts, type UploadPartsCommand, type WriteManifestCommand } from './write-checkpoint';

export interface CheckpointStoreOptions {
  /** Uploads/downloads in flight per call (default 4). */
  readonly concurrency?: number;
  readonly clock?: () => number;
  /** Allowance for clock skew between writers, retention and S3 (default 60 s). */
  readonly safetyMarginMs?: number;
  /** A pending write older than this is taken for dead (default 1 h). */
  readonly abandonAfterMs?: number;
}

/**
 * Checkpoints and savepoints of jobs on S3 (through @weir/blob): incremental, content-addressed, manifest last.
 * One instance serves every tenant and job; identity travels in every call. Layout: see layout.ts.
 */
export class CheckpointStore {
  private readonly concurrency: number;
  private readonly clock: () => number;
  private readonly safetyMarginMs: number;
  private readonly abandonAfterMs: number;

  constructor(
    private readonly blob: BlobStore,
    options: CheckpointStoreOptions = {},
  ) {
    this.concurrency = options.concurrency ?? 4;
    this.clock = options.clock ?? Date.now;
    this.safetyMarginMs = options.safetyMarginMs ?? 60_000;
    this.abandonAfterMs = options.abandonAfterMs ?? 3_600_000;
  }

  /** Uploads what is new since the latest checkpoint, then the manifest. A savepoint id makes it a savepoint. */
  write(command: WriteCheckpointCommand): Promise<CompletedCheckpoint> {
    const job = { tenantId: command.tenantId, jobId: command.jobId };
    return writeCheckpoint(
      {
        blob: this.blob,
        concurrency: this.concurrency,
        clock: this.clock,
        // A base that cannot be read is no base: everything is uploaded again.
        latest: () => this.latest(job).catch((err) => (err instanceof ManifestFormatError ? null : Promise.reject(err))),
        existingSavepoint: (savepointId) => this.savepoint(job, savepointId),
      },
      command,
    );
  }

  /**
   * A job spread over several processes: each uploads its parts (uploadParts), the run's leader writes the one
   * manifest naming them all (writeManifest), and each process then releases its pending marker (releaseParts).
   */
  uploadParts(command: UploadPartsCommand): Promise<UploadedParts> {
    return uploadParts(this.writerContext(command), command);
  }

  writeManifest(command: WriteManifestCommand): Promise<CompletedCheckpoint> {
    return writeManifest(this.writerContext(command), command);
  }

  /** The manifest naming these parts is written (or the checkpoint was given up): their marker may go. */
  async releaseParts(parts: Pick<UploadedParts, 'marker'>): Promise<void> {
    await this.blob.delete(parts.marker);
  }

  private writerContext(job: JobScope) {
    return {
      blob: this.blob,
      concurrency: this.concurrency,
      clock: this.clock,
      latest: () => this.latest(job).catch((err) => (err instanceof ManifestFormatError ? null : Promise.reject(err))),
      existingSavepoint: (savepointId: string) => this.savepoint(job, savepointId),
    };
  }

  /** Completed checkpoints (oldest first), then savepoints; manifests are not read. */
  async list(job: JobScope): Promise<StoredCheckpointRef[]> {
    const out: StoredCheckpointRef[] = [];
    for await (const info of this.blob.list(checkpointsPrefix(job))) {
      const checkpointId = checkpointIdOfKey(job, info.key);
      if (checkpointId !== undefined) out.push({ kind: 'checkpoint', checkpointId, key: info.key, lastModified: info.lastModified });
    }
    for await (const info of this.blob.list(savepointsPrefix(job))) {
      const savepointId = savepointIdOfKey(job, info.key);
      if (savepointId !== undefined) out.push({ kind: 'savepoint', savepointId, key: info.key, lastModified: info.lastModified });
    }
    return out;
  }

  /** Reads and validates one manifest (ManifestFormatError / ManifestVersionError when it cannot be read). */
  async read(ref: StoredCheckpointRef | string): Promise<CompletedCheckpoint> {
    const key = typeof ref === 'string' ? ref : ref.key;
    let bytes: Buffer;
    try {
      bytes = await getBytes(this.blob, key);
    } catch (err) {
      if (err instanceof BlobNotFoundError) throw new CheckpointNotFoundError(`no manifest at ${key}`);
      throw err;
    }
    return { key, manifest: parseManifest(bytes, key) };
  }

  /** The newest completed checkpoint, or null when the job has none. */
  async latest(job: JobScope): Promise<CompletedCheckpoint | null> {
    const checkpoints = (await this.list(job)).filter((r) => r.kind === 'checkpoint');
    const newest = checkpoints[checkpoints.length - 1];
    return newest ? this.read(newest) : null;
  }

  async savepoint(job: JobScope, savepointId: string): Promise<CompletedCheckpoint | null> {
    try {
      return await this.read(savepointManifestKey(job, savepointId));
    } catch (err) {
      if (err instanceof CheckpointNotFoundError) return null;
      throw err;
    }
  }

  /** Downloads and verifies the selected parts (see download.ts); CorruptCheckpointError names a bad file. */
  download(
    checkpoint: CompletedCheckpoint,
    selections: readonly DownloadSelection[],
    localDir: string,
  ): Promise<DownloadedCheckpoint> {
    return downloadCheckpoint(this.blob, checkpoint.manifest, selections, localDir, this.concurrency);
  }

  /**
   * Downloads the newest checkpoint that is whole: an unreadable manifest, or a missing, truncated or corrupt file
   * skips to the previous checkpoint, and every skip is reported with its reason. Files go to
   * `localDir/<checkpointId>/...`; the directories of skipped checkpoints are removed.
   */
  async restoreLatestUsable(
    job: JobScope,
    selections: readonly DownloadSelection[],
    localDir: string,
  ): Promise<RestoredCheckpoint> {
    const refs = (await this.list(job)).filter((r) => r.kind === 'checkpoint').reverse();
    const skipped: RestoreAttempt[] = [];
    for (const ref of refs) {
      if (ref.kind !== 'checkpoint') continue;
      const dir = join(localDir, String(ref.checkpointId));
      try {
        const checkpoint = await this.read(ref);
        return { checkpoint: await this.download(checkpoint, selections, dir), skipped };
      } catch (err) {
        const usable = err instanceof CorruptCheckpointError || err instanceof ManifestFormatError || err instanceof CheckpointNotFoundError;
        if (!usable) throw err;
        skipped.push({ checkpointId: ref.checkpointId, reason: (err as Error).message });
        await rm(dir, { recursive: true, force: true });
      }
    }
    const detail = skipped.map((s) => `checkpoint ${s.checkpointId}: ${s.reason}`).join('; ');
    throw new NoUsableCheckpointError(
      `job ${job.tenantId}/${job.jobId} has no usable checkpoint${detail ? ` (${detail})` : ''}`,
      skipped,
    );
  }

  /**
   * Keeps the last `keep` completed checkpoints and every savepoint; deletes other manifests, then the shared files
   * no kept manifest references. Safe while checkpoints are being written (see plan-retention.ts).
   */
  async retain(job: JobScope, keep: number): Promise<RetentionReport> {
    const now = this.clock();
    // Markers first, then manifests, then files: the order planRetention's safety argument relies on.
    const markersListedAt = this.clock();
    const pending = [];
    for await (const info of this.blob.list(pendingPrefix(job))) {
      const lastModified = info.lastModified?.getTime() ?? now;
      const bytes = await getBytes(this.blob, info.key).catch((err) =>
        err instanceof BlobNotFoundError ? null : Promise.reject(err),
      );
      if (bytes) pending.push({ key: info.key, lastModified, marker: decodeMarker(bytes, lastModified) });
    }
    const refs = await this.list(job);
    const filesOf = async (ref: StoredCheckpointRef): Promise<ReadonlySet<string> | null> => {
      try {
        return new Set(referencedFiles((await this.read(ref)).manifest).keys());
      } catch (err) {
        if (err instanceof ManifestFormatError) return null;
        if (err instanceof CheckpointNotFoundError) return new Set();
        throw err;
      }
    };
    const files = await mapBounded(refs, this.concurrency, filesOf);
    const checkpoints = [];
    const savepoints = [];
    for (let i = 0; i < refs.length; i++) {
      const ref = refs[i];
      if (ref.kind === 'checkpoint') {
        checkpoints.push({ checkpointId: ref.checkpointId, key: ref.key, lastModified: ref.lastModified?.getTime() ?? now, files: files[i] });
      } else savepoints.push({ savepointId: ref.savepointId, files: files[i] });
    }
    const shared = [];
    const prefix = sharedPrefix(job);
    for await (const info of this.blob.list(prefix)) {
      shared.push({ sha256: info.key.slice(prefix.length), key: info.key, size: info.size, lastModified: info.lastModified?.getTime() ?? now });
    }
    const plan = planRetention(
      { now, markersListedAt, pending, checkpoints, savepoints, shared },
      { keep, safetyMarginMs: this.safetyMarginMs, abandonAfterMs: this.abandonAfterMs },
    );
    await mapBounded(plan.dropManifests, this.concurrency, ({ key }) => this.blob.delete(key));
    await mapBounded(plan.deleteFiles, this.concurrency, ({ key }) => this.blob.delete(key));
    await mapBounded(plan.deleteMarkers, this.concurrency, (key) => this.blob.delete(key));
    return {
      keptCheckpoints: plan.keptCheckpoints,
      droppedCheckpoints: plan.dropManifests.map((m) => m.checkpointId),
      deletedFiles: plan.deleteFiles.length,
      deletedBytes: plan.deleteFiles.reduce((sum, f) => sum + f.size, 0),
      keptFiles: plan.keptFiles,
      notes: plan.notes,
    };
  }

  /** Deletes a savepoint's manifest (true if it existed); its files go at the next retain() no one else needs them. */
  async dispose(job: JobScope, savepointId: string): Promise<boolean> {
    const key = savepointManifestKey(job, savepointId);
    if ((await this.blob.head(key)) === null) return false;
    await this.blob.delete(key);
    return true;
  }
}

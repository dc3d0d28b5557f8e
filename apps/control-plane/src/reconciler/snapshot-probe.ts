import { Inject, Injectable } from '@nestjs/common';
import type { BlobStore } from '@weir/blob';
import { CheckpointStore, type CompletedCheckpoint } from '@weir/checkpoint';
import { BLOB_STORE } from '../infrastructure/tokens';
import { SavepointCommands } from '../savepoints/savepoint-commands';
import { lifecycleSavepointsToDispose } from './lifecycle-savepoints';

/** S3 is asked inside a reconcile transaction (it holds the deployment's row): bounded, like the Redis calls. */
const S3_TIMEOUT_MS = 10_000;

export class SnapshotProbeTimeoutError extends Error {
  override readonly name = 'SnapshotProbeTimeoutError';
}

/**
 * What the reconciler needs to know about a job's snapshots when it stops or resumes it: whether a savepoint is on
 * S3 (its manifest, written last, is the proof), the newest checkpoint's id (for the reasons it writes), and why
 * the worker refused a savepoint or a stop; and the disposal of its own old savepoints. Every call bounded.
 */
@Injectable()
export class SnapshotProbe {
  private readonly store: CheckpointStore;

  constructor(
    @Inject(BLOB_STORE) blob: BlobStore,
    private readonly commands: SavepointCommands,
  ) {
    this.store = new CheckpointStore(blob);
  }

  savepoint(tenantId: string, jobId: string, savepointId: string): Promise<CompletedCheckpoint | null> {
    return bounded(this.store.savepoint({ tenantId, jobId }, savepointId), `read savepoint ${savepointId}`);
  }

  /** The id of the job's newest completed checkpoint (null when none), for a reason; a failure reads as unknown. */
  async latestCheckpointId(tenantId: string, jobId: string): Promise<number | null | undefined> {
    try {
      const refs = await bounded(this.store.list({ tenantId, jobId }), 'list checkpoints');
      const ids = refs.flatMap((r) => (r.kind === 'checkpoint' ? [r.checkpointId] : []));
      return ids.length ? Math.max(...ids) : null;
    } catch {
      return undefined;
    }
  }

  /**
   * Disposes of the reconciler's own savepoints beyond the newest few (lifecycle-savepoints.ts), except `protect`.
   * Best effort: their files go at the job's next retention round; a failure leaves them for the next stop.
   */
  async pruneLifecycleSavepoints(tenantId: string, jobId: string, protect: ReadonlySet<string>): Promise<void> {
    const scope = { tenantId, jobId };
    try {
      const refs = await bounded(this.store.list(scope), 'list savepoints');
      const ids = refs.flatMap((r) => (r.kind === 'savepoint' ? [r.savepointId] : []));
      for (const id of lifecycleSavepointsToDispose(ids, protect)) await bounded(this.store.dispose(scope, id), `dispose savepoint ${id}`);
    } catch {
      // Left for the next stop.
    }
  }

  /** The worker's reason for rejecting a command (a savepoint that failed), or null; never throws. */
  commandFailure(workerId: string, commandKey: string): Promise<string | null> {
    return this.commands.failureOf(workerId, commandKey).catch(() => null);
  }

  /** True when the worker's queue has no such command (queued, running or finished); Redis failing reads as false. */
  commandMissing(workerId: string, commandKey: string): Promise<boolean> {
    return this.commands.exists(workerId, commandKey).then(
      (exists) => !exists,
      () => false,
    );
  }
}

async function bounded<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SnapshotProbeTimeoutError(`${what}: no answer from S3 within ${S3_TIMEOUT_MS} ms`)), S3_TIMEOUT_MS);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

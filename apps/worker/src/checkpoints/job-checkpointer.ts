import type { CheckpointStore, CompletedCheckpoint, JobScope } from '@weir/checkpoint';
import type { RunningJob } from '@weir/engine';
import { toCheckpointParts } from './snapshot-codec';

export interface CheckpointingOptions {
  /** Between the end of one checkpoint and the start of the next. */
  readonly intervalMs: number;
  /** Completed checkpoints kept on S3 (savepoints are never collected). */
  readonly retain: number;
}

export interface CheckpointerEvents {
  completed(checkpoint: CompletedCheckpoint, durationMs: number): void;
  failed(checkpointId: number, error: Error): void;
  retentionFailed(error: Error): void;
}

/**
 * Takes the job's checkpoints and savepoints, one at a time: barrier cut (engine) → manifest on S3
 * (libs/checkpoint, incremental) → exactly-once sinks commit → retention. A checkpoint that fails is reported and
 * the next one is taken on schedule (an exactly-once sink's uncommitted epoch rides along with it).
 */
export class JobCheckpointer {
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly job: RunningJob,
    private readonly store: CheckpointStore,
    private readonly scope: JobScope,
    private readonly maxParallelism: number,
    private nextId: number,
    private readonly options: CheckpointingOptions,
    private readonly events: CheckpointerEvents,
  ) {}

  /** `immediately`: the first checkpoint right away (after a savepoint restore, so "latest" is the restored state). */
  start(immediately = false): void {
    if (immediately) {
      this.enqueue(() => this.take())
        .catch(() => undefined)
        .finally(() => this.schedule());
    } else {
      this.schedule();
    }
  }

  /** Takes a savepoint (idempotent per id: an existing savepoint is returned as it is). */
  savepoint(savepointId: string): Promise<CompletedCheckpoint> {
    return this.enqueue(async () => (await this.store.savepoint(this.scope, savepointId)) ?? this.take(savepointId));
  }

  /** Stops scheduling and waits for a checkpoint in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.chain.catch(() => undefined);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.enqueue(() => this.take())
        .catch(() => undefined)
        .finally(() => this.schedule());
    }, this.options.intervalMs);
  }

  private enqueue<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.catch(() => undefined).then(work);
    this.chain = next;
    return next;
  }

  private async take(savepointId?: string): Promise<CompletedCheckpoint> {
    const checkpointId = this.nextId++;
    const startedAt = Date.now();
    try {
      const snapshot = await this.job.triggerCheckpoint(checkpointId);
      const parts = toCheckpointParts(snapshot, (stageId, subtask) => this.job.routingTable(stageId).keyGroupsOf(subtask));
      const completed = await this.store.write({
        ...this.scope,
        checkpointId,
        maxParallelism: this.maxParallelism,
        parts,
        ...(savepointId ? { savepointId } : {}),
      });
      await this.job.completeCheckpoint(checkpointId);
      this.events.completed(completed, Date.now() - startedAt);
      if (!savepointId) await this.store.retain(this.scope, this.options.retain).catch((err: Error) => this.events.retentionFailed(err));
      return completed;
    } catch (err) {
      this.events.failed(checkpointId, err as Error);
      throw err;
    }
  }
}

/** The next checkpoint id: past every checkpoint and savepoint the job has, so ids (and sink epochs) only grow. */
export async function nextCheckpointId(store: CheckpointStore, scope: JobScope, restoredId: number | null): Promise<number> {
  let max = restoredId ?? 0;
  for (const ref of await store.list(scope)) {
    if (ref.kind === 'checkpoint') max = Math.max(max, ref.checkpointId);
    else max = Math.max(max, (await store.read(ref)).manifest.checkpointId);
  }
  return max + 1;
}

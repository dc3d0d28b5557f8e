import { StaleReuseError, type CheckpointStore, type CompletedCheckpoint, type JobScope } from '@weir/checkpoint';
import type { RunningJob } from '@weir/engine';
import { ChainBrokenError, KeyGroupChains, type ChainSeed } from './key-group-chains';
import { toCheckpointParts } from './snapshot-codec';

/** Flink's default: long enough for the first, full checkpoint of large state; a stuck one is given up after it. */
export const DEFAULT_CHECKPOINT_TIMEOUT_MS = 600_000;

export interface CheckpointingOptions {
  /** Between the end of one checkpoint and the start of the next. */
  readonly intervalMs: number;
  /** Completed checkpoints kept on S3 (savepoints are never collected). */
  readonly retain: number;
  /** A checkpoint (or savepoint) not complete within this long is given up and reported; the next one follows. */
  readonly timeoutMs?: number;
  /**
   * Makes the job's keyed state backends hand over full images at the next cut: called when a cut's changes were
   * lost (a checkpoint given up during its cut, a broken chain), since the chains cannot be continued then.
   */
  readonly requestFullCheckpoint?: () => void;
}

export class CheckpointTimeoutError extends Error {
  override readonly name = 'CheckpointTimeoutError';
}

export interface CheckpointerEvents {
  completed(checkpoint: CompletedCheckpoint, durationMs: number): void;
  failed(checkpointId: number, error: Error): void;
  retentionFailed(error: Error): void;
}

/**
 * Takes the job's checkpoints and savepoints, one at a time: barrier cut (engine) → manifest on S3
 * (libs/checkpoint; keyed state as per-key-group chains, key-group-chains.ts) → exactly-once sinks commit →
 * retention. A checkpoint that fails or times out is reported and the next one is taken on schedule (an
 * exactly-once sink's uncommitted epoch rides along with it). A savepoint is a checkpoint whose manifest is also
 * written under savepoints/ (same files, nothing uploaded twice).
 */
export class JobCheckpointer {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly chains: KeyGroupChains;
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
    /** Stored chains to continue (recovery from the latest checkpoint). */
    seeds: readonly ChainSeed[] = [],
  ) {
    this.chains = new KeyGroupChains(seeds);
  }

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
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_CHECKPOINT_TIMEOUT_MS;
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abort.abort();
        reject(new CheckpointTimeoutError(`${savepointId ? `savepoint ${savepointId} (checkpoint ${checkpointId})` : `checkpoint ${checkpointId}`} did not complete within ${timeoutMs} ms and was given up`));
      }, timeoutMs);
    });
    const progress = { cut: false };
    try {
      const completed = await Promise.race([this.attempt(checkpointId, savepointId, abort.signal, progress), timeout]);
      this.events.completed(completed, Date.now() - startedAt);
      if (!savepointId) await this.store.retain(this.scope, this.options.retain).catch((err: Error) => this.events.retentionFailed(err));
      return completed;
    } catch (err) {
      abort.abort();
      // Changes handed over at a cut that never reached a checkpoint part, or chains that no longer match the
      // backends: nothing can be chained onto them, so the next cut takes full images.
      if (!progress.cut || err instanceof StaleReuseError || err instanceof ChainBrokenError) {
        this.chains.reset();
        this.options.requestFullCheckpoint?.();
      }
      this.events.failed(checkpointId, err as Error);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** One checkpoint (and its savepoint manifest); gives up without side effects once `signal` aborts. */
  private async attempt(checkpointId: number, savepointId: string | undefined, signal: AbortSignal, progress: { cut: boolean }): Promise<CompletedCheckpoint> {
    const snapshot = await this.job.triggerCheckpoint(checkpointId);
    if (signal.aborted) throw new CheckpointTimeoutError(`checkpoint ${checkpointId} was given up during its cut`);
    const parts = toCheckpointParts(snapshot, (stageId, subtask) => this.job.routingTable(stageId).keyGroupsOf(subtask), this.chains);
    progress.cut = true;
    const checkpoint = await this.store.write({ ...this.scope, checkpointId, maxParallelism: this.maxParallelism, parts, signal });
    // Given up while its manifest was being written: the next checkpoint may already be extending the chains, and
    // re-sends this one's new links (harmless: they are stored, so nothing is uploaded twice).
    if (signal.aborted) throw new CheckpointTimeoutError(`checkpoint ${checkpointId} was given up while its manifest was written`);
    this.chains.completed(checkpoint.manifest);
    let completed = checkpoint;
    if (savepointId) {
      // The same files under a savepoint manifest: every one is in the checkpoint just written (the base).
      completed = await this.store.write({
        ...this.scope,
        checkpointId,
        maxParallelism: this.maxParallelism,
        savepointId,
        signal,
        parts: checkpoint.manifest.operators.flatMap((o) =>
          o.subtasks.map((s) => ({ operatorId: o.operatorId, subtask: s.subtask, reusedMetadata: s.metadata, ...(s.keyGroups ? { keyGroups: s.keyGroups } : {}) })),
        ),
      });
      this.events.completed(checkpoint, 0);
    }
    if (signal.aborted) throw new CheckpointTimeoutError(`checkpoint ${checkpointId} was given up before its sinks committed`);
    await this.job.completeCheckpoint(checkpointId);
    return completed;
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

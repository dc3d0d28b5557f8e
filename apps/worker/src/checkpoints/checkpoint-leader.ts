/**
 * Process 0 of a run leads its checkpoints and savepoints, one at a time: once every process is ready, trigger →
 * every process's part (checkpoint-participant.ts) → the one manifest naming them all, written last (it is what makes
 * the checkpoint exist) → complete, upon which every process's exactly-once sinks commit → retention. A checkpoint
 * that a process fails, or that is not whole within the timeout, is aborted and the next follows on schedule.
 */
import type { CheckpointStore, CompletedCheckpoint, JobScope, ManifestOperator } from '@weir/checkpoint';
import type { PartStats, RunControlChannel, RunControlDelivery } from '../runs/run-control';

/** Flink's default: long enough for the first, full checkpoint of large state; a stuck one is given up after it. */
export const DEFAULT_CHECKPOINT_TIMEOUT_MS = 600_000;
/** How often a follower that is not yet acknowledged says it is ready. */
export const READY_REPEAT_MS = 250;

/** How long a rescale in waits for its retirees to end their outputs. */
const RETIRE_TIMEOUT_MS = 30_000;

export class CheckpointTimeoutError extends Error {
  override readonly name = 'CheckpointTimeoutError';
}

export interface LeaderOptions {
  readonly processes: number;
  readonly maxParallelism: number;
  /** Between the end of one checkpoint and the start of the next; 0: only savepoints. */
  readonly intervalMs: number;
  /** Completed checkpoints kept on S3 (savepoints are never collected). */
  readonly retain: number;
  readonly timeoutMs?: number;
}

export interface LeaderEvents {
  retentionFailed(error: Error): void;
}

interface Collecting {
  readonly checkpointId: number;
  readonly parts: Map<number, { readonly operators: readonly ManifestOperator[]; readonly stats: PartStats }>;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

export class CheckpointLeader {
  private readonly ready = new Set<number>([0]);
  private readonly allReady: Promise<void>;
  private markReady!: () => void;
  /** The processes whose parts make a checkpoint: the run's count, changed by a live rescale. */
  private processes: number;
  /** A live rescale out waiting for its joiners to say they are ready. */
  private joining: { readonly count: number; readonly resolve: () => void } | null = null;
  /** A live rescale in waiting for its retirees to say they ended their outputs. */
  private retiring: { readonly waiting: Set<number>; readonly resolve: () => void } | null = null;
  private collecting: Collecting | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private base: number | null;

  constructor(
    private readonly store: CheckpointStore,
    private readonly scope: JobScope,
    private readonly channel: RunControlChannel,
    private nextId: number,
    private readonly options: LeaderOptions,
    private readonly events: LeaderEvents,
    /** The checkpoint the run restored, if any (the first manifest's base). */
    restoredCheckpointId: number | null,
  ) {
    this.base = restoredCheckpointId;
    this.processes = options.processes;
    this.allReady = new Promise((resolve) => (this.markReady = resolve));
    if (options.processes === 1) this.markReady();
  }

  onDelivery({ from, message }: RunControlDelivery): void {
    switch (message.type) {
      case 'ready':
        if (!this.ready.has(from)) {
          this.ready.add(from);
          if (this.allHeard(this.options.processes)) this.markReady();
          if (this.joining && this.allHeard(this.joining.count)) this.joining.resolve();
        }
        void this.channel.publish({ type: 'hello', ready: [...this.ready] }).catch(() => undefined);
        return;
      case 'retired':
        if (this.retiring?.waiting.delete(from) && this.retiring.waiting.size === 0) this.retiring.resolve();
        return;
      case 'part': {
        const c = this.collecting;
        // A process that joined after the trigger, or retired before it, has no part in this checkpoint.
        if (!c || c.checkpointId !== message.checkpointId || from >= this.processes) return;
        c.parts.set(from, { operators: message.operators, stats: message.stats });
        if (c.parts.size === this.processes) c.resolve();
        return;
      }
      case 'part-failed': {
        const c = this.collecting;
        if (c && c.checkpointId === message.checkpointId && from < this.processes) c.reject(new Error(`process ${from} could not store its part: ${message.message}`));
        return;
      }
    }
  }

  /** `immediately`: the first checkpoint right away (after a savepoint restore, so "latest" is the restored state). */
  start(immediately = false): void {
    if (this.options.intervalMs <= 0) return;
    if (immediately) {
      this.enqueue(() => this.take())
        .catch(() => undefined)
        .finally(() => this.schedule());
    } else {
      this.schedule();
    }
  }

  /** Takes a savepoint (idempotent per id: an existing one is returned); with `stop`, every process stops with it. */
  savepoint(savepointId: string, stop = false): Promise<CompletedCheckpoint> {
    return this.enqueue(async () => {
      let existing: CompletedCheckpoint | null;
      try {
        existing = await this.store.savepoint(this.scope, savepointId);
      } catch (err) {
        // Failed before any trigger: the processes waiting for this savepoint's verdict must still hear it.
        const reason = `savepoint ${savepointId} could not be started: ${(err as Error).message}`;
        await this.channel.publish({ type: 'abort', checkpointId: 0, reason, savepointId, ...(stop ? { stop } : {}) }).catch(() => undefined);
        throw err;
      }
      if (!existing) return this.take(savepointId, stop);
      // A retried trigger: the processes hear of it as of a savepoint just taken (a stop stops them).
      const { checkpointId } = existing.manifest;
      await this.channel.publish({ type: 'complete', checkpointId, manifestKey: existing.key, savepointId, savepointKey: existing.key, ...(stop ? { stop } : {}) });
      return existing;
    });
  }

  /**
   * Runs `work` in the leader's order, between two checkpoints (a live key-group move: a moved key group must be in
   * exactly one part of every cut).
   */
  between<T>(work: () => Promise<T>): Promise<T> {
    return this.enqueue(work);
  }

  /**
   * A live rescale out, in the leader's order: once processes [current, count) have said they are ready (within
   * `timeoutMs`), every process hears the new sizes (a `resize` naming the next checkpoint) and checkpoints take the
   * joiners' parts too. They own no key group yet, so they join between two checkpoints with nothing to cut.
   */
  grow(count: number, stages: Readonly<Record<string, number>>, timeoutMs: number): Promise<void> {
    return this.enqueue(async () => {
      if (count <= this.processes) return;
      let timer: NodeJS.Timeout | undefined;
      try {
        await new Promise<void>((resolve, reject) => {
          if (this.allHeard(count)) return resolve();
          this.joining = { count, resolve };
          timer = setTimeout(() => {
            const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !this.ready.has(i));
            reject(new Error(`processes ${missing.join(', ')} did not join the run within ${timeoutMs / 1000} s`));
          }, timeoutMs);
        });
      } finally {
        clearTimeout(timer);
        this.joining = null;
      }
      await this.channel.publish({ type: 'resize', processes: count, stages, firstCheckpoint: this.nextId });
      this.processes = count;
    });
  }

  /**
   * A live rescale in, in the leader's order, once the retiring processes (from `count` up) own nothing: one more
   * checkpoint with their parts, so that what they wrote before giving their key groups away commits (their
   * exactly-once sinks commit on its completion), then every process hears the new sizes and checkpoints go on
   * without them.
   */
  shrink(count: number, stages: Readonly<Record<string, number>>): Promise<void> {
    return this.enqueue(async () => {
      if (count >= this.processes) return;
      if (this.options.intervalMs > 0) await this.take();
      const waiting = new Set(Array.from({ length: this.processes - count }, (_, i) => count + i));
      const retired = new Promise<void>((resolve) => (this.retiring = { waiting, resolve }));
      await this.channel.publish({ type: 'resize', processes: count, stages, firstCheckpoint: this.nextId });
      this.processes = count;
      for (const p of [...this.ready]) if (p >= count) this.ready.delete(p);
      // Their ends must be on their way before the control plane stops them (else the stages they fed would go on
      // counting their channels); one that does not answer is stopped all the same, after a while.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([retired, new Promise<void>((resolve) => (timer = setTimeout(resolve, RETIRE_TIMEOUT_MS)))]);
      clearTimeout(timer);
      this.retiring = null;
    });
  }

  /** The processes checkpoints take parts from now. */
  get processCount(): number {
    return this.processes;
  }

  private allHeard(count: number): boolean {
    for (let p = 0; p < count; p++) if (!this.ready.has(p)) return false;
    return true;
  }

  /** Stops scheduling and waits for a checkpoint in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.collecting?.reject(new Error('the run is stopping'));
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
    const next = this.chain.catch(() => undefined).then(async () => {
      await this.allReady;
      return work();
    });
    this.chain = next;
    return next;
  }

  private async take(savepointId?: string, stop = false): Promise<CompletedCheckpoint> {
    const checkpointId = this.nextId++;
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_CHECKPOINT_TIMEOUT_MS;
    const what = savepointId ? `savepoint ${savepointId} (checkpoint ${checkpointId})` : `checkpoint ${checkpointId}`;
    const collected = new Promise<void>((resolve, reject) => {
      this.collecting = { checkpointId, parts: new Map(), resolve, reject };
    });
    // A stop may reject it before the race below awaits it: never an unhandled rejection (it would end the job host).
    collected.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    // Given up after the timeout: a manifest not yet written then never is (the signal is checked before its put).
    const abort = new AbortController();
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abort.abort();
        reject(new CheckpointTimeoutError(`${what} did not complete within ${timeoutMs} ms and was given up`));
      }, timeoutMs);
    });
    const parts = this.collecting!.parts;
    let written: { checkpoint: CompletedCheckpoint; saved: CompletedCheckpoint | null };
    try {
      await this.channel.publish({ type: 'trigger', checkpointId, ...(savepointId ? { savepointId } : {}), ...(stop ? { stop } : {}) });
      await Promise.race([collected, timeout]);
      written = await Promise.race([this.writeManifests(checkpointId, [...parts.values()], abort.signal, savepointId), timeout]);
    } catch (err) {
      abort.abort();
      const reason = (err as Error).message;
      await this.channel
        .publish({ type: 'abort', checkpointId, reason, ...(savepointId ? { savepointId } : {}), ...(stop ? { stop } : {}) })
        .catch(() => undefined);
      throw err;
    } finally {
      clearTimeout(timer);
      this.collecting = null;
    }
    // The manifest is on S3: the checkpoint exists, whatever happens next (a crash now restores it and commits its
    // sinks' epochs from it: commit-markers.ts).
    this.base = checkpointId;
    const { checkpoint, saved } = written;
    await this.channel.publish({
      type: 'complete',
      checkpointId,
      manifestKey: checkpoint.key,
      ...(saved ? { savepointId, savepointKey: saved.key } : {}),
      ...(stop ? { stop } : {}),
    });
    if (!savepointId) await this.store.retain(this.scope, this.options.retain).catch((err: Error) => this.events.retentionFailed(err));
    return saved ?? checkpoint;
  }

  /** The manifest naming every process's parts, written last; a savepoint's names the same files. */
  private async writeManifests(
    checkpointId: number,
    parts: readonly { readonly operators: readonly ManifestOperator[]; readonly stats: PartStats }[],
    signal: AbortSignal,
    savepointId: string | undefined,
  ): Promise<{ checkpoint: CompletedCheckpoint; saved: CompletedCheckpoint | null }> {
    const manifest = {
      ...this.scope,
      checkpointId,
      maxParallelism: this.options.maxParallelism,
      operators: parts.flatMap((p) => p.operators),
      stats: sumStats(parts.map((p) => p.stats)),
      baseCheckpointId: this.base,
      signal,
    };
    const checkpoint = await this.store.writeManifest(manifest);
    const saved = savepointId ? await this.store.writeManifest({ ...manifest, savepointId, signal: undefined }) : null;
    return { checkpoint, saved };
  }
}

function sumStats(stats: readonly PartStats[]): PartStats {
  return stats.reduce(
    (sum, s) => ({
      stateBytes: sum.stateBytes + s.stateBytes,
      uploadedBytes: sum.uploadedBytes + s.uploadedBytes,
      uploadedFiles: sum.uploadedFiles + s.uploadedFiles,
      reusedFiles: sum.reusedFiles + s.reusedFiles,
    }),
    { stateBytes: 0, uploadedBytes: 0, uploadedFiles: 0, reusedFiles: 0 },
  );
}

/**
 * This process's part of the run's checkpoints (every job host has one; process 0's leader triggers them). On a
 * trigger: the engine's cut over this process's subtasks (barriers enter at its sources, and its keyed subtasks align
 * over every channel, local or across the Kafka exchange) → keyed state as per-key-group chains → uploaded as parts
 * (libs/checkpoint) → their manifest entries sent to the leader. On complete (the leader's manifest is on S3): the
 * chains advance and the exactly-once sinks commit that epoch. On abort: nothing commits; changes already handed
 * over ride along with the next checkpoint.
 */
import type { CheckpointStore, JobScope, ManifestOperator, UploadedParts } from '@weir/checkpoint';
import type { RunningJob } from '@weir/engine';
import type { RunControlChannel, RunControlMessage } from '../runs/run-control';
import { KeyGroupChains, type ChainSeed } from './key-group-chains';
import { toCheckpointParts } from './snapshot-codec';

export interface ParticipantEvents {
  /** A checkpoint this process took part in is complete (its manifest is on S3 and its sinks committed). */
  completed(message: Extract<RunControlMessage, { type: 'complete' }>, durationMs: number): void;
  /** This process could not store its part, or the leader gave the checkpoint up. */
  failed(checkpointId: number, message: string, savepointId?: string): void;
  /** A stop-with-savepoint completed: this process must stop now. */
  stopRequested(savepointId: string): void;
}

export interface ParticipantOptions {
  readonly process: number;
  readonly maxParallelism: number;
  /** The backends hand over full images at the next cut (a cut's changes were lost). */
  readonly requestFullCheckpoint?: () => void;
  /** Stored chains this process continues (recovery from the latest checkpoint), and what that checkpoint stored. */
  readonly seeds?: readonly ChainSeed[];
  readonly restored?: { readonly checkpointId: number; readonly files: ReadonlySet<string> };
  /**
   * This process joined a running run (a live rescale): it takes part from the checkpoint its `resize` names, not
   * before (a barrier it sent earlier would reach subtasks that do not count it yet).
   */
  readonly joining?: boolean;
}

export class CheckpointParticipant {
  private readonly chains: KeyGroupChains;
  /** Files the last completed checkpoint holds of this process: not uploaded again. */
  private known: ReadonlySet<string>;
  private base: number | null;
  /** Checkpoints cut and stored here, waiting for the leader's verdict. */
  private readonly pending = new Map<number, { readonly parts: UploadedParts; readonly operators: readonly ManifestOperator[] }>();
  /** When each checkpoint's trigger arrived here. */
  private readonly triggeredAt = new Map<number, number>();
  /** Verdicts that came while this process was still storing its part. */
  private readonly settled = new Set<number>();
  /** Post-cut work runs one checkpoint at a time, in order: the chains advance in checkpoint order. */
  private work: Promise<void> = Promise.resolve();
  /** Gives up the cut in progress: a newer trigger or an abort means the leader will never complete it. */
  private abandonCut: (() => void) | null = null;
  /** The first checkpoint this process takes part in; null while a joiner has not been counted in yet. */
  private firstCheckpoint: number | null;

  constructor(
    private readonly job: RunningJob,
    private readonly store: CheckpointStore,
    private readonly scope: JobScope,
    private readonly channel: RunControlChannel,
    private readonly options: ParticipantOptions,
    private readonly events: ParticipantEvents,
  ) {
    this.chains = new KeyGroupChains(options.seeds ?? []);
    this.known = options.restored?.files ?? new Set();
    this.base = options.restored?.checkpointId ?? null;
    this.firstCheckpoint = options.joining ? null : 0;
  }

  onMessage(message: RunControlMessage): void {
    if (message.type === 'resize' && this.firstCheckpoint === null && this.options.process < message.processes) this.firstCheckpoint = message.firstCheckpoint;
    if (message.type === 'trigger') {
      if (this.firstCheckpoint !== null && message.checkpointId >= this.firstCheckpoint) this.onTrigger(message);
    }
    else if (message.type === 'complete') this.track(this.onComplete(message));
    else if (message.type === 'abort') this.track(this.onAbort(message));
  }

  /** Waits for the part in progress and for verdicts being applied (a stop lets their commits finish first). */
  async drain(): Promise<void> {
    await this.work.catch(() => undefined);
    while (this.verdicts.size > 0) await Promise.allSettled([...this.verdicts]);
  }

  private readonly verdicts = new Set<Promise<void>>();

  private track(verdict: Promise<void>): void {
    this.verdicts.add(verdict);
    void verdict.catch(() => undefined).finally(() => this.verdicts.delete(verdict));
  }

  private onTrigger(message: Extract<RunControlMessage, { type: 'trigger' }>): void {
    const { checkpointId } = message;
    this.triggeredAt.set(checkpointId, Date.now());
    // The pause is armed before the barrier enters: it is the savepoint's barrier the sources stop at.
    if (message.stop) this.job.pauseSourcesAfterNextBarrier();
    // The cut starts at once; storing it waits for the previous checkpoint's part (chains advance in order).
    this.abandonCut?.();
    let abandon!: () => void;
    const abandoned = new Promise<never>((_, reject) => {
      abandon = () => reject(new Error(`checkpoint ${checkpointId} was given up before its cut completed`));
    });
    abandoned.catch(() => undefined);
    this.abandonCut = abandon;
    const cut = Promise.race([this.job.triggerCheckpoint(checkpointId), abandoned]).finally(() => {
      if (this.abandonCut === abandon) this.abandonCut = null;
    });
    cut.catch(() => undefined);
    const step = this.work.then(() => this.storePart(checkpointId, cut));
    this.work = step.catch(() => undefined);
  }

  private async storePart(checkpointId: number, cut: ReturnType<RunningJob['triggerCheckpoint']>): Promise<void> {
    let cutDone = false;
    try {
      const snapshot = await cut;
      const parts = toCheckpointParts(snapshot, (stageId, subtask) => this.job.routingTable(stageId).keyGroupsOf(subtask), this.chains);
      cutDone = true;
      const uploaded = await this.store.uploadParts({
        ...this.scope,
        checkpointId,
        maxParallelism: this.options.maxParallelism,
        parts,
        known: this.known,
        base: this.base,
        writer: `p${this.options.process}`,
      });
      if (this.settled.has(checkpointId)) {
        // Given up while this part was stored: no manifest will name it.
        this.settled.delete(checkpointId);
        await this.store.releaseParts(uploaded).catch(() => undefined);
        return;
      }
      this.pending.set(checkpointId, { parts: uploaded, operators: uploaded.operators });
      await this.channel.publish({ type: 'part', checkpointId, operators: uploaded.operators, stats: uploaded.stats });
    } catch (err) {
      // Changes handed over at a cut that never reached a stored part cannot be chained onto: full images next time.
      if (!cutDone) {
        this.chains.reset();
        this.options.requestFullCheckpoint?.();
      }
      await this.channel.publish({ type: 'part-failed', checkpointId, message: (err as Error).message }).catch(() => undefined);
    }
  }

  private async onComplete(message: Extract<RunControlMessage, { type: 'complete' }>): Promise<void> {
    await this.work.catch(() => undefined);
    const mine = this.pending.get(message.checkpointId);
    const durationMs = Date.now() - (this.triggeredAt.get(message.checkpointId) ?? Date.now());
    this.triggeredAt.delete(message.checkpointId);
    if (!mine) {
      // Not a cut of this process (a savepoint that existed already, or a process that joined after the trigger):
      // nothing to commit here, but a savepoint's waiters and a stop still hear of it.
      this.settled.add(message.checkpointId);
      if (message.savepointId) this.events.completed(message, 0);
      if (message.stop && message.savepointId) this.events.stopRequested(message.savepointId);
      return;
    }
    this.pending.delete(message.checkpointId);
    this.chains.completed({ operators: [...mine.operators] });
    this.known = filesOf(mine.operators);
    this.base = message.checkpointId;
    try {
      await this.job.completeCheckpoint(message.checkpointId);
      this.events.completed(message, durationMs);
    } catch (err) {
      this.events.failed(message.checkpointId, `its exactly-once sinks could not commit: ${(err as Error).message}`, message.savepointId);
    }
    await this.store.releaseParts(mine.parts).catch(() => undefined);
    if (message.stop && message.savepointId) this.events.stopRequested(message.savepointId);
  }

  private async onAbort(message: Extract<RunControlMessage, { type: 'abort' }>): Promise<void> {
    this.triggeredAt.delete(message.checkpointId);
    this.abandonCut?.();
    if (message.stop) this.job.resumeSources();
    const mine = this.pending.get(message.checkpointId);
    if (mine) {
      this.pending.delete(message.checkpointId);
      await this.store.releaseParts(mine.parts).catch(() => undefined);
    } else {
      this.settled.add(message.checkpointId);
    }
    this.events.failed(message.checkpointId, message.reason, message.savepointId);
  }
}

/** Every file the given manifest entries reference. */
function filesOf(operators: readonly ManifestOperator[]): ReadonlySet<string> {
  const files = new Set<string>();
  for (const o of operators) {
    for (const s of o.subtasks) {
      for (const f of s.files) files.add(f.sha256);
      for (const f of s.metadata) files.add(f.sha256);
    }
  }
  return files;
}

/**
 * How the job host processes of one run talk to each other: one ordered stream of small messages that every process
 * reads and any may write. Process 0 leads the run's checkpoints over it (checkpoints/checkpoint-leader.ts); every
 * process takes its part (checkpoints/checkpoint-participant.ts). A run in one process uses the same messages in
 * memory. Kafka carries them between processes (kafka-run-control.ts): Weir adds no transport of its own.
 */
import type { ManifestOperator } from '@weir/checkpoint';
import type { KeySplit } from '@weir/engine';

export type RunControlMessage =
  /** A follower's job runs and reads this channel (re-sent until the leader's hello names it). */
  | { readonly type: 'ready' }
  /** The leader's answer: the processes it has heard are ready. */
  | { readonly type: 'hello'; readonly ready: readonly number[] }
  /** Take checkpoint `checkpointId` (a savepoint with `savepointId`); with `stop`, every source pauses at its barrier. */
  | { readonly type: 'trigger'; readonly checkpointId: number; readonly savepointId?: string; readonly stop?: boolean }
  /** A process stored its parts: their manifest entries, for the leader's manifest. */
  | { readonly type: 'part'; readonly checkpointId: number; readonly operators: readonly ManifestOperator[]; readonly stats: PartStats }
  | { readonly type: 'part-failed'; readonly checkpointId: number; readonly message: string }
  /** The manifest is on S3: sinks commit; with `stop`, every process stops (stop-with-savepoint). */
  | {
      readonly type: 'complete';
      readonly checkpointId: number;
      readonly manifestKey: string;
      readonly savepointId?: string;
      readonly savepointKey?: string;
      readonly stop?: boolean;
    }
  /**
   * A live rescale, in the leader's order between two checkpoints: from `firstCheckpoint` on the run has `processes`
   * processes and these keyed stages these subtask counts. Every process resizes its routing tables and barriers say
   * the new counts; a process that joined takes part in checkpoints from `firstCheckpoint` on, not before.
   */
  | { readonly type: 'resize'; readonly processes: number; readonly stages: Readonly<Record<string, number>>; readonly firstCheckpoint: number }
  /**
   * A fresh run's broadcast bootstrap: this subtask of broadcast source `stageId` passed on what its input held at
   * start, and the exchange has it (runs/bootstrap-relay.ts); data sources wait for every such subtask of the run.
   */
  | { readonly type: 'broadcast-caught-up'; readonly stageId: string; readonly subtask: number }
  /** A retiring process ended its keyed outputs after a `resize` (the leader reports the rescale once all have). */
  | { readonly type: 'retired' }
  /** Given up: nothing commits; with `stop`, paused sources read again. */
  | { readonly type: 'abort'; readonly checkpointId: number; readonly reason: string; readonly savepointId?: string; readonly stop?: boolean }
  /** A live move the leader orders (between checkpoints): each process releases what its subtasks own of it. */
  | { readonly type: 'move'; readonly moveId: string; readonly operatorId: string; readonly moves: readonly MovedKeyGroup[] }
  /** A key group left its old owner: its state (inline, or on S3) and the exchange offset its new owner reads from. */
  | ({
      readonly type: 'released';
      readonly moveId: string;
      readonly operatorId: string;
      readonly offset: string;
      readonly bytes: number;
      readonly releasedAt: number;
      readonly image: { readonly inline: string } | { readonly key: string };
      /** The old owner's standing (base64; key-group-moves.ts in the engine), for a subtask that joined the run. */
      readonly standing: string;
    } & MovedKeyGroup)
  /** The new owner restored it and reads on: every process's routing table names the new owner from now on. */
  | ({ readonly type: 'adopted'; readonly moveId: string; readonly operatorId: string; readonly bytes: number; readonly pauseMs: number } & MovedKeyGroup)
  | { readonly type: 'move-failed'; readonly moveId: string; readonly keyGroup: number; readonly message: string }
  /**
   * A splittable window's split keys, the operator's whole table, from process 0 (which applied it already): every
   * other process applies it to its own keyBy terminals. No checkpoint alignment: where a split key's records land
   * never changes a result.
   */
  | { readonly type: 'split-keys'; readonly operatorId: string; readonly splits: readonly KeySplit[] }
  /** A live rescale of a source (between checkpoints): each process releases the partitions its subtasks read. */
  | { readonly type: 'move-partitions'; readonly moveId: string; readonly sourceId: string; readonly moves: readonly MovedPartition[] }
  /** A partition left its old owner, everything read from it in the exchange: its new owner reads on from `offset`. */
  | ({
      readonly type: 'partition-released';
      readonly moveId: string;
      readonly sourceId: string;
      readonly offset: string;
      readonly maxTimestamp: number | null;
      readonly releasedAt: number;
    } & MovedPartition)
  | ({ readonly type: 'partition-adopted'; readonly moveId: string; readonly sourceId: string; readonly pauseMs: number } & MovedPartition)
  | { readonly type: 'partition-move-failed'; readonly moveId: string; readonly partition: number; readonly message: string };

export interface MovedPartition {
  readonly partition: number;
  readonly fromSubtask: number;
  readonly toSubtask: number;
}

export interface MovedKeyGroup {
  readonly keyGroup: number;
  readonly fromSubtask: number;
  readonly toSubtask: number;
}

export interface PartStats {
  readonly stateBytes: number;
  readonly uploadedBytes: number;
  readonly uploadedFiles: number;
  readonly reusedFiles: number;
}

/** One message as delivered: which process of the run sent it. */
export interface RunControlDelivery {
  readonly from: number;
  readonly message: RunControlMessage;
}

export interface RunControlChannel {
  /** Starts reading; `deliver` sees every message published after start (its own too), in one order for all. */
  start(deliver: (delivery: RunControlDelivery) => void): Promise<void>;
  publish(message: RunControlMessage): Promise<void>;
  close(): Promise<void>;
}

/** A run in one process: the same messages, in memory, delivered after the publishing call returns. */
export class LocalRunControl implements RunControlChannel {
  private deliver: ((delivery: RunControlDelivery) => void) | null = null;

  start(deliver: (delivery: RunControlDelivery) => void): Promise<void> {
    this.deliver = deliver;
    return Promise.resolve();
  }

  publish(message: RunControlMessage): Promise<void> {
    const deliver = this.deliver;
    if (deliver) setImmediate(() => deliver({ from: 0, message }));
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.deliver = null;
    return Promise.resolve();
  }
}

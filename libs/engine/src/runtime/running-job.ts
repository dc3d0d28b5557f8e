import type { KafkaConnector } from '@weir/kafka';
import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import type { KeyedStateBackend } from '@weir/state';
import type { BootstrapPeers } from './broadcast-bootstrap';
import type { KeySplit, RoutingTable } from '../keygroups';
import type { SinkEpoch } from './connectors/exactly-once-sink';
import type { KeyGroupMove } from './exchange/exchange';
import type { KeyGroupHandover } from './key-group-moves';
import type { PartitionHandover } from './connectors/sources';
import type { ParallelismOption } from './plan';
import type { Clock } from './ports';
import type { SubtaskSnapshot } from './subtask';

export interface SubtaskContext {
  readonly tenantId: string;
  readonly jobId: string;
  readonly operatorId: string;
  readonly subtask: number;
  readonly parallelism: number;
}

export interface RunJobOptions {
  readonly tenantId: string;
  readonly jobId: string;
  /** Subtasks per stage (a stage is named by its source or keyed operator id). Default 1. */
  readonly parallelism?: ParallelismOption;
  /** Needed by Kafka sources, sinks and the dead-letter topic. */
  readonly kafka?: KafkaConnector;
  /** Opens the keyed state backend of one keyed subtask (one directory per subtask for the LSM backend). */
  readonly state: (ctx: SubtaskContext) => Promise<KeyedStateBackend>;
  /** Dead letters go to this Kafka topic; without it they are kept in memory (the test driver reads them). */
  readonly deadLetterTopic?: string;
  readonly clock?: Clock;
  /**
   * At most this many records per second through each keyed subtask: after a batch it waits out the time the cap gives
   * it (waiting, not spinning). So that n processes on a small machine stand for n machines of a known capacity in
   * capacity planning and benchmarks (a deployment sets it with the property `subtask.max-records-per-second`).
   */
  readonly subtaskRecordsPerSecond?: number;
  /** Records buffered per subtask input before producers block (backpressure). Default 20,000. */
  readonly queueCapacity?: number;
  /**
   * How keyBy and broadcast edges travel: 'memory' (default) inside this process; 'kafka' through an internal topic
   * per keyed operator with one partition per key group, so the job's subtasks can run in several processes.
   */
  readonly exchange?: 'memory' | 'kafka';
  /**
   * With the Kafka exchange: which subtasks of each stage this process runs (stage id → subtask indexes).
   * Stages not named run all their subtasks here. Every process of a job must be given the same definition.
   */
  readonly subtasks?: Readonly<Record<string, readonly number[]>>;
  /**
   * Starts from a checkpoint: key-group images go to whichever subtask owns each key group now (so the parallelism
   * may differ), broadcast state to every subtask, source positions to the sources. State of an operator id the
   * job no longer has is refused (JobRunError naming it).
   */
  readonly restore?: CheckpointSnapshot;
  /**
   * Kafka sinks: 'at-least-once' (default) writes each batch at once (idempotent producer; a restart may repeat
   * output since the last checkpoint); 'exactly-once' holds each epoch's output and commits it in a Kafka
   * transaction when completeCheckpoint says the checkpoint is durable.
   */
  readonly delivery?: 'at-least-once' | 'exactly-once';
  /**
   * Which run of the job this is (the deployment's run number; default 0). The Kafka exchange stamps it on every
   * record and skips records of older runs: what a previous run wrote after the checkpoint this one restores is
   * written again by the replaying sources, and a zombie of a previous run cannot reach this one. Must grow from run
   * to run of a job.
   */
  readonly incarnation?: number;
  /**
   * Keyed stage id → the subtask owning each key group (index = key group), as live moves left it; stages not named
   * start with contiguous ranges (Flink's). Every process of a job must be given the same.
   */
  readonly routing?: Readonly<Record<string, readonly number[]>>;
  /**
   * With the Kafka exchange: this process joins a run that is running (a live rescale); `parallelism` is the run's
   * before it. Its keyed subtasks start owning no key group and wait for some to be moved to them (a subtask given
   * none otherwise ends at once); the first one adopted brings the old owner's broadcast state and event time. A
   * source that rescales live (plan.ts, sourceRescalesLive) is planned at the new parallelism and its subtasks here
   * start reading no partition, waiting for some to be moved to them; any other source keeps the run's parallelism
   * before, and none of its subtasks runs here.
   */
  readonly joining?: { readonly parallelism: Readonly<Record<string, number>> };
  /**
   * With the Kafka exchange, on a fresh start: how the run's processes hear of each other's broadcast subtasks
   * catching up (broadcast-bootstrap.ts), so every process's data sources wait until the broadcast input that was
   * available at start is ahead of them in the exchange. Without it such a run's data sources read at once, and a
   * record may meet no broadcast state.
   */
  readonly bootstrapPeers?: BootstrapPeers;
  /** Restored Kafka source offsets: source id → partition → next offset. */
  readonly sourceOffsets?: Readonly<Record<string, Readonly<Record<number, string>>>>;
}

/** One stage of a job as planned: a source or a keyed operator and the operators chained behind it. */
export interface StageShape {
  readonly id: string;
  readonly kind: 'source' | 'keyed';
  /** Subtasks across the whole run (a Kafka source: at most one per partition; a keyed stage: as rescaled live). */
  readonly parallelism: number;
  /** The stage's operators: its root and everything chained behind it. */
  readonly operatorIds: readonly string[];
  /** Keyed stages whose keyed input this stage writes (through a keyBy edge). */
  readonly feeds: readonly string[];
  /** Keyed stages whose broadcast input this stage writes. */
  readonly broadcastFeeds: readonly string[];
  /** A source that rescales live (a Kafka source feeding only keyBy edges): its topic's partition count. */
  readonly partitions?: number;
  /** A splittable window's first operator: its hot keys may be split (RunningJob.splitKeys). */
  readonly splittable?: true;
  /**
   * An event-time window operator: its key groups do not move live between processes yet (an adopter ahead in event
   * time would drop the moved key group's records read behind it as late).
   */
  readonly windows?: true;
}

export class JobRunError extends Error {
  override readonly name = 'JobRunError';
}

export interface MemorySourceRecord<T = unknown> {
  readonly value: T;
  /** Event time; without it the source's timestamp assigner (or the current processing time) decides. */
  readonly timestamp?: number;
}

export interface RunningJob {
  readonly tenantId: string;
  readonly jobId: string;
  /** Resolves when every subtask has finished (bounded inputs) or after stop(); rejects if a subtask fails. */
  readonly done: Promise<void>;
  metrics(): SubtaskMetricsSnapshot[];
  stop(): Promise<void>;
  routingTable(operatorId: string): RoutingTable;
  /** The job's stages as planned in this process: what a live rescale checks before it changes one. */
  shape(): readonly StageShape[];
  /** Moves key groups of a keyed operator to other subtasks while the job runs (pause, hand over state, resume). */
  moveKeyGroups(operatorId: string, moves: readonly KeyGroupMove[]): Promise<RoutingTable>;
  /**
   * A live move between processes (Kafka exchange), in two halves run by the old and the new owner's process: the
   * release stops reading the key group's partition, hands its state over in-band after the records already read
   * and drops it; the adopt restores that state and reads on from the offset. Only between checkpoints.
   */
  releaseKeyGroup(operatorId: string, keyGroup: number, toSubtask: number): Promise<KeyGroupHandover>;
  adoptKeyGroup(operatorId: string, keyGroup: number, toSubtask: number, handover: KeyGroupHandover): Promise<void>;
  /**
   * A key group moved between subtasks of other processes: this process's routing table names its new owner (no
   * state here changes). Idempotent; a table names a subtask past its width once the run's rescale adds it.
   */
  routeKeyGroup(operatorId: string, keyGroup: number, toSubtask: number): void;
  /**
   * A live rescale changed a stage's subtask count (its key groups or source partitions have moved already): this
   * process's routing table, its barriers and shape() say so from now on, and its subtasks that retired end their
   * output channels. The process's own subtasks stay as they are.
   */
  resizeStage(stageId: string, parallelism: number): Promise<void>;
  /**
   * A live rescale's move of a source partition between processes, in two halves run by the old and the new owner's
   * process: the release stops reading it between two polls and resolves once everything read from it is in the
   * exchange; the adopt reads on from that offset. Only between checkpoints.
   */
  releaseSourcePartition(sourceId: string, partition: number): Promise<PartitionHandover>;
  adoptSourcePartition(sourceId: string, partition: number, toSubtask: number, handover: PartitionHandover): Promise<void>;
  /**
   * Splits hot keys of a splittable window (WindowOptions.splittable) over several key groups in this process's
   * keyBy terminals; keys left out go whole to their own key group again. Each process of a run takes its own
   * call: until all have, records of a key land by either table, which changes who does the work, never a result.
   */
  splitKeys(operatorId: string, splits: readonly KeySplit[]): void;
  keySplits(operatorId: string): readonly KeySplit[];
  /** The image of one key group of a keyed operator, taken in-band after every record routed to it so far. */
  snapshotKeyGroup(operatorId: string, keyGroup: number): Promise<Uint8Array>;
  restoreKeyGroup(operatorId: string, keyGroup: number, image: Uint8Array): Promise<void>;
  /** Kafka sources: source id → per subtask, partition key → next offset. */
  sourcePositions(): Record<string, Record<string, string>[]>;
  /**
   * Takes an aligned checkpoint: barriers enter at the sources, flow with the data, and every subtask snapshots when
   * it has seen the barrier on all its inputs. Resolves with every local subtask's part of the consistent cut
   * (source positions, key-group images, broadcast state). One checkpoint at a time. Over the Kafka exchange each
   * process of a job triggers the same id (its sources' barriers reach the other processes through the exchange) and
   * resolves with its own subtasks' parts; the checkpoint is whole once every process's part is stored.
   */
  triggerCheckpoint(checkpointId: number): Promise<CheckpointSnapshot>;
  /**
   * Stop-with-savepoint: every Kafka and generator source stops reading at the next barrier it offers (a savepoint's,
   * or a checkpoint's already on its way: either way nothing read after a barrier that precedes the savepoint's).
   * Later barriers still pass. Memory sources (the test driver) are not paused. Likewise every keyed subtask holds its
   * processing-time timers once it has completed its next barrier: they stay pending in the savepoint and fire in
   * the restored job only (event-time timers need no hold: the paused sources send no further watermarks).
   */
  pauseSourcesAfterNextBarrier(): void;
  /** The savepoint failed: paused sources read again and held processing-time timers fire. */
  resumeSources(): void;
  /**
   * The checkpoint is durable (its manifest is on S3): exactly-once sinks commit the epoch its barrier closed.
   * Never call it for a checkpoint that was not stored.
   */
  completeCheckpoint(checkpointId: number): Promise<void>;
}

export interface CheckpointSnapshot {
  readonly checkpointId: number;
  readonly subtasks: readonly SubtaskSnapshot[];
  /** Exactly-once sinks: each sink subtask's output since the previous barrier, committed once this is durable. */
  readonly sinkEpochs?: readonly SinkEpoch[];
}

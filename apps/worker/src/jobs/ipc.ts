/**
 * Messages between the worker (supervisor) and a job host child process. The child runs one tenant's job; the
 * supervisor never loads tenant code itself.
 */
import type { JobConfig, KeySplit } from '@weir/engine';
import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import type { MoveReport, RescaleProgress, RescaleReport } from '@weir/protocol';
import type { BlobReply, BlobRequest } from '../blob-broker/blob-wire';
import type { TenantKafkaIdentity } from '../kafka-access/tenant-kafka-access';

export interface StartJobMessage {
  readonly type: 'start';
  readonly tenantId: string;
  readonly jobId: string;
  /**
   * The tenant's Kafka identity: its brokers (the job hosts' listener) and credentials, whose ACLs reach only the
   * tenant's topics (kafka-access/). Absent: the platform's brokers, unauthenticated (WEIR_KAFKA_TENANT_BROKERS=off).
   */
  readonly kafka?: TenantKafkaIdentity;
  /** Local path of the verified bundle file. */
  readonly bundlePath: string;
  /** Subtasks per stage across the whole run (stage root operator id → count). */
  readonly parallelism: Readonly<Record<string, number>>;
  /** Which process of the run this is; absent: the whole run in this one process. */
  readonly process?: { readonly index: number; readonly count: number };
  /** This process's subtask indexes per stage (a run over several processes); absent: all of them. */
  readonly subtasks?: Readonly<Record<string, readonly number[]>>;
  /** The run number: the job's incarnation (records between processes carry it; older runs' are skipped). */
  readonly runNo?: number;
  /** Each keyed subtask processes at most this many records per second (property `subtask.max-records-per-second`). */
  readonly subtaskRecordsPerSecond?: number;
  /** Keyed stage → owner subtask of each key group (live moves left it so); absent: contiguous ranges. */
  readonly routing?: Readonly<Record<string, readonly number[]>>;
  readonly maxParallelism: number;
  /** The operator ids the bundle's manifest names (run-subtasks `operatorIds`): the job it builds must have these. */
  readonly operatorIds?: readonly string[];
  /** Where this job's LSM state lives on the worker's disk. */
  readonly stateDir: string;
  readonly deadLetterTopic: string;
  /** The deployment's config, which a parameterized job is built with. */
  readonly config?: JobConfig;
  /** Periodic checkpoints; absent: none (and at-least-once sinks). */
  readonly checkpointing?: JobCheckpointing;
  /** Start from this checkpoint or savepoint (`snapshotId: "latest"`: the newest usable checkpoint). */
  readonly restoreFrom?: { readonly snapshotId: string; readonly location: string };
  /** Restore even if the snapshot holds state of operators this bundle does not have (that state is dropped). */
  readonly allowNonRestoredState?: boolean;
  /** This process joins its run while it runs (a live rescale): the run's parallelism before it, for its sources. */
  readonly joining?: { readonly parallelism: Readonly<Record<string, number>> };
}

export interface JobCheckpointing {
  readonly intervalMs: number;
  readonly retain: number;
  readonly delivery: 'exactly-once' | 'at-least-once';
  /** A checkpoint not complete within this long is given up (default 10 minutes). */
  readonly timeoutMs?: number;
}

export interface StopJobMessage {
  readonly type: 'stop';
  /** Take this savepoint first (stop-with-savepoint); the job stops only if it was taken. */
  readonly savepointId?: string;
}

export interface SavepointMessage {
  readonly type: 'savepoint';
  readonly savepointId: string;
}

export interface MoveMessage {
  readonly type: 'move';
  readonly moveId: string;
  readonly operatorId: string;
  readonly moves: readonly { readonly keyGroup: number; readonly fromSubtask: number; readonly toSubtask: number }[];
}

/** A splittable window's split keys, the operator's whole table (process 0 only: it hands it to every process). */
export interface SplitKeysMessage {
  readonly type: 'split-keys';
  readonly splitId: string;
  readonly operatorId: string;
  readonly splits: readonly KeySplit[];
}

/** A live rescale of the run (process 0 only: it leads the run). */
export interface RescaleMessage {
  readonly type: 'rescale';
  readonly rescaleId: string;
  /** The run's process count once rescaled. */
  readonly processes: number;
  /** Subtasks wanted per keyed operator. */
  readonly parallelism: Readonly<Record<string, number>>;
}

/** The worker's answers to the job host's object-store calls travel here too (blob-broker/). */
export type ToJobHost = StartJobMessage | StopJobMessage | SavepointMessage | MoveMessage | RescaleMessage | SplitKeysMessage | BlobReply;

export type FromJobHost =
  | { readonly type: 'started'; readonly subtasks: readonly { readonly operatorId: string; readonly subtask: number }[] }
  | { readonly type: 'metrics'; readonly snapshots: readonly SubtaskMetricsSnapshot[] }
  | { readonly type: 'restored'; readonly checkpointId: number; readonly manifestKey: string; readonly skipped: readonly { checkpointId: number; reason: string }[]; readonly recommittedEpochs: number }
  | { readonly type: 'checkpoint'; readonly checkpointId: number; readonly savepointId: string | null; readonly manifestKey: string; readonly durationMs: number }
  | { readonly type: 'checkpoint-failed'; readonly checkpointId: number; readonly message: string }
  | { readonly type: 'savepoint-failed'; readonly savepointId: string; readonly message: string }
  | { readonly type: 'moved'; readonly report: MoveReport }
  | { readonly type: 'move-failed'; readonly moveId: string; readonly message: string }
  | { readonly type: 'keys-split'; readonly splitId: string }
  | { readonly type: 'split-failed'; readonly splitId: string; readonly message: string }
  | ({ readonly type: 'rescale-progress'; readonly rescaleId: string } & RescaleProgress)
  | { readonly type: 'rescaled'; readonly report: RescaleReport }
  /** `refused`: nothing changed (the run goes on as it was); else the job host leaves the run to be restored. */
  | { readonly type: 'rescale-failed'; readonly rescaleId: string; readonly message: string; readonly refused: boolean }
  /** Sent every ALIVE_INTERVAL_MS from a timer: silence means the event loop is blocked (job-host-limits.ts). */
  | { readonly type: 'alive' }
  | { readonly type: 'finished' }
  | { readonly type: 'failed'; readonly message: string }
  /** The job host's object-store calls, which the worker makes for it (blob-broker/). */
  | BlobRequest;

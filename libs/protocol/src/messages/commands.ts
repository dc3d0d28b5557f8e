import { z } from 'zod';
import { epochMs, protocolVersion, resourceId, subtaskIndex, subtaskRefSchema } from './common';

/** Key groups [start, end] inclusive; 0 ≤ start ≤ end < maxParallelism (checked below). */
const keyGroupRange = z.tuple([z.number().int().min(0), z.number().int().min(0)]).refine(([a, b]) => a <= b, {
  message: 'key group range must have start ≤ end',
});

/** Names a savepoint, a move or a rescale the caller chose: safe in an S3 key and an idempotency key. */
const operationId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'expected 1-128 of [A-Za-z0-9._-], not starting with . _ -');

const commandBase = {
  v: protocolVersion,
  /**
   * The same key means the same command: the control plane may send it twice (a retry, a second instance) and
   * the worker must apply it once. It is also the BullMQ job id, so a duplicate still queued is dropped at once.
   */
  idempotencyKey: z.string().regex(/^[A-Za-z0-9._-]{1,200}$/, 'expected 1-200 of [A-Za-z0-9._-]'),
  issuedAt: epochMs,
  tenantId: resourceId,
  jobId: resourceId,
};

export const subtaskAssignmentSchema = z.strictObject({
  operatorId: resourceId,
  subtask: subtaskIndex,
  keyGroups: z.array(keyGroupRange).max(32768),
});
export type SubtaskAssignment = z.infer<typeof subtaskAssignmentSchema>;

/**
 * The deployment's config as its job is built with it (the SDK's deployment-time parameters): logical topic name →
 * Kafka topic (the control plane checked each lies under the tenant's namespace), and properties as strings.
 */
export const jobConfigSchema = z.strictObject({
  topics: z
    .record(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected a logical topic name: 1-64 of [A-Za-z0-9_-]'), z.string().regex(/^[A-Za-z0-9._-]{1,249}$/, 'expected a Kafka topic name'))
    .refine((topics) => Object.keys(topics).length <= 256, 'at most 256 topics')
    .optional(),
  properties: z
    .record(z.string().min(1).max(128), z.string().max(4096))
    .refine((properties) => Object.keys(properties).length <= 256, 'at most 256 properties')
    .optional(),
});
export type JobConfigMessage = z.infer<typeof jobConfigSchema>;

/**
 * Which of a run's job host processes a command is for. A deployment runs in `count` processes (one per slot, on one
 * or several workers); process 0 leads the run's checkpoints. Absent: process 0 of 1 (the whole job in one process).
 */
export const runProcessSchema = z
  .strictObject({ index: z.number().int().min(0).max(4095), count: z.number().int().min(1).max(4096) })
  .refine((p) => p.index < p.count, { message: 'process index must be below the process count' });
export type RunProcess = z.infer<typeof runProcessSchema>;

export const runSubtasksSchema = z
  .strictObject({
    ...commandBase,
    type: z.literal('run-subtasks'),
    process: runProcessSchema.optional(),
    /**
     * The run's number: the job's incarnation. Records a job host writes between processes carry it, and records of
     * older runs are skipped (their zombies, and what they wrote past the checkpoint this run restores).
     */
    runNo: z.number().int().min(0).optional(),
    /**
     * Subtasks per operator across the whole run (every process needs the job's full shape to plan it). Absent: one
     * more than the highest subtask index of each operator in `subtasks` (a run in one process).
     */
    parallelism: z.record(resourceId, z.number().int().min(1).max(32768)).optional(),
    /**
     * Per keyed operator, the subtask owning each key group (index = key group) across the whole run, as live moves
     * left it; absent (or an operator missing): contiguous ranges. A recovery keeps the routing moves made.
     */
    routing: z.record(resourceId, z.array(subtaskIndex).max(32768)).optional(),
    /** The job bundle in the blob store, and its sha256 so the worker runs exactly what was uploaded. */
    bundle: z.strictObject({ key: z.string().min(1).max(1024), sha256: z.string().regex(/^[0-9a-f]{64}$/) }),
    /**
     * The operator ids the bundle's manifest names, checked against its code at upload: the job host refuses to run
     * a bundle whose job builds another graph where it runs (a bundle that can tell the upload check from a worker).
     */
    operatorIds: z.array(resourceId).max(4096).optional(),
    maxParallelism: z.number().int().min(1).max(32768),
    subtasks: z.array(subtaskAssignmentSchema).min(1).max(4096),
    /** What a parameterized job is built with; absent: an empty config (a fixed job ignores it). */
    config: jobConfigSchema.optional(),
    /** Restore state from this checkpoint or savepoint before processing; absent for a fresh start. */
    restoreFrom: z.strictObject({ snapshotId: z.string().min(1).max(200), location: z.string().min(1).max(1024) }).optional(),
    /**
     * This process joins its run while the run keeps running (a live rescale out): it restores nothing and starts with
     * no key groups (process 0 moves some to it), runs no source subtask, and plans the run's sources at `parallelism`
     * here, what the run had before (a live rescale keeps its sources' parallelism). Absent: a process of a new run.
     */
    joining: z.strictObject({ parallelism: z.record(resourceId, z.number().int().min(1).max(32768)) }).optional(),
    /** Restore even though the snapshot holds state of operators the bundle lacks (that state is dropped). */
    allowNonRestoredState: z.boolean().optional(),
    /** Periodic checkpoints and the sinks' delivery guarantee; absent: no checkpoints, at-least-once sinks. */
    checkpointing: z
      .strictObject({
        intervalMs: z.number().int().min(100).max(86_400_000),
        retain: z.number().int().min(1).max(100),
        delivery: z.enum(['exactly-once', 'at-least-once']),
        /** A checkpoint not complete within this long is given up; absent: the worker's default (10 minutes). */
        timeoutMs: z.number().int().min(1_000).max(86_400_000).optional(),
      })
      .optional(),
  })
  .superRefine((command, ctx) => {
    for (const [operatorId, owners] of Object.entries(command.routing ?? {})) {
      if (owners.length !== command.maxParallelism) {
        ctx.addIssue({ code: 'custom', path: ['routing', operatorId], message: `one owner per key group: ${command.maxParallelism} expected` });
      }
    }
    command.subtasks.forEach((s, i) =>
      s.keyGroups.forEach(([, end], j) => {
        if (end >= command.maxParallelism)
          ctx.addIssue({ code: 'custom', path: ['subtasks', i, 'keyGroups', j], message: 'key group ≥ maxParallelism' });
      }),
    );
  });

export const stopSubtasksSchema = z.strictObject({
  ...commandBase,
  type: z.literal('stop-subtasks'),
  /** The process of the run to stop; absent: process 0. */
  process: z.number().int().min(0).max(4095).optional(),
  subtasks: z.array(subtaskRefSchema.pick({ operatorId: true, subtask: true })).min(1).max(4096),
  /** Take this savepoint before stopping (savepoint upgrades and suspends); absent: stop without one. */
  savepoint: z.strictObject({ snapshotId: z.string().min(1).max(200), location: z.string().min(1).max(1024) }).optional(),
  reason: z.string().max(500),
});

/**
 * Take a savepoint of a job running on the worker (user-triggered). The savepoint id is the trigger id: a retried
 * trigger finds the savepoint already on S3 and takes no second one. With `stop`, the job stops once it is taken.
 */
export const takeSavepointSchema = z.strictObject({
  ...commandBase,
  type: z.literal('take-savepoint'),
  savepointId: operationId,
  stop: z.boolean(),
});

/**
 * Moves key groups of a keyed operator between subtasks of a running run, live (Kafka exchange): sent to process 0's
 * worker, which leads the run and orders the move between checkpoints; the processes owning each key group hand it
 * over while every other key group keeps running. The command's result is a MoveReport. `moveId` names the move.
 */
export const moveKeyGroupsSchema = z.strictObject({
  ...commandBase,
  type: z.literal('move-key-groups'),
  runNo: z.number().int().min(0),
  moveId: operationId,
  operatorId: resourceId,
  moves: z
    .array(z.strictObject({ keyGroup: z.number().int().min(0).max(32767), fromSubtask: subtaskIndex, toSubtask: subtaskIndex }))
    .min(1)
    .max(32768),
  reason: z.string().max(500),
});

/** One key group handed over live: what it cost. */
const movedKeyGroup = z.strictObject({
  keyGroup: z.number().int().min(0),
  fromSubtask: subtaskIndex,
  toSubtask: subtaskIndex,
  /** Bytes of the state image handed over. */
  bytes: z.number().int().nonnegative(),
  /** From the release's start to the adoption's end: how long the key group's input waited. */
  pauseMs: z.number().nonnegative(),
});

/** What a move did, key group by key group: the command's result (BullMQ's return value). */
export const moveReportSchema = z.strictObject({
  moveId: z.string(),
  operatorId: resourceId,
  moved: z.array(movedKeyGroup),
  durationMs: z.number().nonnegative(),
});
export type MoveReport = z.infer<typeof moveReportSchema>;

/**
 * Changes a running run's keyed parallelism live (Kafka exchange): sent to process 0's worker once the joining
 * processes (if any) were sent their run-subtasks with `joining`. Process 0 counts the joiners into the run's
 * checkpoints, moves key groups in small steps, between checkpoints, so that each keyed operator's subtasks own even
 * shares; scaling in, it moves every key group off the processes at or past `processes` (the retirees), takes a
 * checkpoint that commits their output and leaves them out of later ones. The retirees then idle, owning nothing,
 * until the control plane, having recorded the report, sends them stop-subtasks. Operators that are not keyed
 * (sources) keep their parallelism whatever `parallelism` says of them; a change live moves cannot make (fewer
 * processes than a source's subtasks, a keyed operator whose output feeds another keyBy, a run in one process) is
 * refused (CommandRejected: the command fails at once, naming why), and the control plane restarts the run instead.
 * Progress is the BullMQ job's progress ({ moved, total } key groups); the result is a RescaleReport.
 */
export const rescaleRunSchema = z.strictObject({
  ...commandBase,
  type: z.literal('rescale-run'),
  runNo: z.number().int().min(0),
  rescaleId: operationId,
  /** The run's process count once rescaled: joiners are the processes from the old count up, retirees from this up. */
  processes: z.number().int().min(1).max(4096),
  /** Subtasks per keyed operator after the rescale (operators not named keep theirs). */
  parallelism: z.record(resourceId, z.number().int().min(1).max(32768)),
  reason: z.string().max(500),
});

/** The rescale's progress, as the command's BullMQ job progress: key groups moved of those to move. */
export const rescaleProgressSchema = z.strictObject({ moved: z.number().int().nonnegative(), total: z.number().int().nonnegative() });
export type RescaleProgress = z.infer<typeof rescaleProgressSchema>;

/** What a live rescale did: the command's result. */
export const rescaleReportSchema = z.strictObject({
  rescaleId: z.string(),
  processes: z.number().int().min(1),
  /** Subtasks per operator across the run now (sources included), as run-subtasks' `parallelism` would say. */
  parallelism: z.record(resourceId, z.number().int().min(1)),
  /** Per keyed operator, the owner of each key group now. */
  routing: z.record(resourceId, z.array(subtaskIndex)),
  moved: z.array(movedKeyGroup.extend({ operatorId: resourceId })),
  durationMs: z.number().nonnegative(),
});
export type RescaleReport = z.infer<typeof rescaleReportSchema>;

/**
 * Splits hot keys of a splittable window (WindowOptions.splittable) over several key groups, or folds them back:
 * `splits` is the operator's whole table from now on (a key left out goes whole to its own key group again). Sent to
 * process 0's worker, which applies it and hands it to every process of the run over the run's control channel.
 * Where a split key's records land never changes a result (each part's partial windows are merged downstream), so
 * it needs no checkpoint alignment; a restore starts with none (the heartbeats' snapshots say what is in effect).
 * A bad table or an operator that is not splittable is rejected (CommandRejected), naming why.
 */
export const splitKeysSchema = z.strictObject({
  ...commandBase,
  type: z.literal('split-keys'),
  runNo: z.number().int().min(0),
  operatorId: resourceId,
  splits: z
    .array(
      z.strictObject({
        key: z.string().max(1024),
        keyGroup: z.number().int().min(0).max(32767),
        parts: z.array(z.number().int().min(0).max(32767)).min(2).max(256),
        weights: z.array(z.number().min(0).max(1)).min(2).max(256),
      }),
    )
    .max(64),
  reason: z.string().max(500),
});

/** Control plane → one worker, on that worker's command queue. */
export const workerCommandSchema = z.discriminatedUnion('type', [runSubtasksSchema, stopSubtasksSchema, takeSavepointSchema, moveKeyGroupsSchema, rescaleRunSchema, splitKeysSchema]);
export type WorkerCommand = z.infer<typeof workerCommandSchema>;
export type RunSubtasks = z.infer<typeof runSubtasksSchema>;
export type StopSubtasks = z.infer<typeof stopSubtasksSchema>;
export type TakeSavepoint = z.infer<typeof takeSavepointSchema>;
export type MoveKeyGroups = z.infer<typeof moveKeyGroupsSchema>;
export type RescaleRun = z.infer<typeof rescaleRunSchema>;
export type SplitKeys = z.infer<typeof splitKeysSchema>;
/** Take-savepoint goes to process 0 of a run, which leads its checkpoints; every process stops with it when asked. */
export type WorkerCommandType = WorkerCommand['type'];

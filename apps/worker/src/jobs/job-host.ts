/**
 * A job host: the child process that runs one tenant's job. It is the isolation boundary between tenants (no two
 * tenants' code shares a process) and between a job's failure and the worker. It talks to its supervisor over IPC.
 * It restores the job from its restore point, takes periodic checkpoints and savepoints, and commits exactly-once
 * sinks when checkpoints complete.
 */
import { join } from 'node:path';
import { CheckpointStore } from '@weir/checkpoint';
import { createBlobStore } from '@weir/blob';
import { loadConfig } from '@weir/config';
import { runJob, type RunningJob } from '@weir/engine';
import { createKafkaConnector } from '@weir/kafka';
import { createStateBackend, type CheckpointableStateBackend } from '@weir/state';
import { loadBundle } from '../bundles/load-bundle';
import { commitRestoredEpochs } from '../checkpoints/commit-markers';
import { DEFAULT_CHECKPOINT_TIMEOUT_MS, JobCheckpointer, nextCheckpointId } from '../checkpoints/job-checkpointer';
import { LATEST_CHECKPOINT, loadRestorePoint } from '../checkpoints/restore-point';
import { restorableSnapshot } from '../checkpoints/restorable-snapshot';
import type { FromJobHost, StartJobMessage, ToJobHost } from './ipc';
import { assertTopicsInNamespace } from './topic-namespace';

const METRICS_INTERVAL_MS = 1_000;

function send(message: FromJobHost): void {
  process.send?.(message);
}

let job: RunningJob | undefined;
let checkpointer: JobCheckpointer | undefined;
let metricsTimer: NodeJS.Timeout | undefined;

async function start(message: StartJobMessage): Promise<void> {
  const config = loadConfig();
  const definition = loadBundle(message.bundlePath, message.config);
  if (definition.maxParallelism !== message.maxParallelism) {
    throw new Error(`the bundle declares maxParallelism ${definition.maxParallelism}, the deployment ${message.maxParallelism}`);
  }
  // Tenant code may name any topic: refuse one outside the tenant's namespace before any reader, writer or restore.
  assertTopicsInNamespace(definition, message.tenantId, message.jobId, message.deadLetterTopic);
  const scope = { tenantId: message.tenantId, jobId: message.jobId };
  const kafka = createKafkaConnector({ brokers: config.WEIR_KAFKA_BROKERS, clientId: `${config.WEIR_KAFKA_CLIENT_ID}-${message.jobId}` });
  const store = new CheckpointStore(createBlobStore(config));
  const operatorIds = definition.nodes.map((n) => n.id);
  const point = message.restoreFrom
    ? await loadRestorePoint(store, scope, message.restoreFrom, operatorIds, join(message.stateDir, 'restore'))
    : null;
  let restore;
  if (point) {
    restore = restorableSnapshot(point.decoded.snapshot, definition, message.allowNonRestoredState ?? false);
    // Epochs sealed in the checkpoint but not committed before the crash are committed now, exactly once.
    const { committed } = await commitRestoredEpochs(kafka, scope.tenantId, scope.jobId, point.decoded.sinkEpochs);
    send({ type: 'restored', checkpointId: point.checkpointId, manifestKey: point.manifestKey, skipped: point.skipped, recommittedEpochs: committed });
  }
  const checkpointing = message.checkpointing;
  const backends = new Set<CheckpointableStateBackend>();
  job = await runJob(definition, {
    tenantId: message.tenantId,
    jobId: message.jobId,
    parallelism: { default: 1, ...message.parallelism },
    kafka,
    deadLetterTopic: message.deadLetterTopic,
    delivery: checkpointing?.delivery ?? 'at-least-once',
    ...(restore ? { restore } : {}),
    // A changelog per key group: checkpoints upload what changed, plus each key group's full image on its turn.
    state: async (ctx) => {
      // Recovering: the key groups of this subtask's stored chain continue it (KeyGroupChains is seeded alike).
      const seed = point?.chains.find((c) => c.operatorId === ctx.operatorId && c.subtask === ctx.subtask);
      const continueFrom = seed ? Object.keys(seed.index.bases).map(Number) : [];
      const path = join(message.stateDir, `${ctx.operatorId}-${ctx.subtask}`);
      const backend = await createStateBackend({ kind: 'lsm', path, changelog: { continueFrom } });
      backends.add(backend);
      return backend;
    },
  });
  const running = job;
  checkpointer = new JobCheckpointer(running, store, scope, definition.maxParallelism, await nextCheckpointId(store, scope, point?.checkpointId ?? null), {
    intervalMs: checkpointing?.intervalMs ?? 0,
    retain: checkpointing?.retain ?? 3,
    timeoutMs: checkpointing?.timeoutMs ?? DEFAULT_CHECKPOINT_TIMEOUT_MS,
    requestFullCheckpoint: () => backends.forEach((b) => b.requestFullCheckpoint()),
  }, {
    completed: (c, durationMs) =>
      send({ type: 'checkpoint', checkpointId: c.manifest.checkpointId, savepointId: c.manifest.savepointId, manifestKey: c.key, durationMs }),
    failed: (checkpointId, err) => send({ type: 'checkpoint-failed', checkpointId, message: err.message }),
    retentionFailed: (err) => process.stderr.write(`checkpoint retention failed: ${err.message}\n`),
  }, point?.chains ?? []);
  if (checkpointing && checkpointing.intervalMs > 0) checkpointer.start(Boolean(point) && message.restoreFrom?.snapshotId !== LATEST_CHECKPOINT);
  const stages = new Map<string, number>();
  for (const snapshot of running.metrics()) stages.set(snapshot.operatorId, Math.max(stages.get(snapshot.operatorId) ?? 0, snapshot.subtask + 1));
  send({ type: 'started', stages: [...stages].map(([operatorId, parallelism]) => ({ operatorId, parallelism })) });
  metricsTimer = setInterval(() => send({ type: 'metrics', snapshots: running.metrics() }), METRICS_INTERVAL_MS);
  running.done.then(
    () => exit({ type: 'finished' }, 0),
    (err: Error) => exit({ type: 'failed', message: err.message }, 1),
  );
}

async function stop(savepointId: string | undefined): Promise<void> {
  if (!job) return exit({ type: 'finished' }, 0);
  if (savepointId) {
    // As Flink's stop-with-savepoint: the sources read nothing after the savepoint's barrier (or an earlier
    // checkpoint's still on its way), so no sink writes output that the restored job would produce again.
    job.pauseSourcesAfterNextBarrier();
    try {
      await checkpointer!.savepoint(savepointId);
    } catch (err) {
      // The job keeps running: a stop-with-savepoint that could not take its savepoint does not stop.
      job.resumeSources();
      send({ type: 'savepoint-failed', savepointId, message: (err as Error).message });
      return;
    }
  }
  await checkpointer?.stop();
  // No metrics from a stopping job: stop() destroys its latency recorders, and a snapshot taken after that throws.
  clearInterval(metricsTimer);
  await job.stop();
}

function exit(last: FromJobHost, code: number): void {
  clearInterval(metricsTimer);
  // The deployment's reason points at the worker's log for the error: this is where it is written.
  if (last.type === 'failed') process.stderr.write(`job host ${process.pid} failed: ${last.message}\n`);
  send(last);
  // Let IPC flush before leaving.
  setTimeout(() => process.exit(code), 50);
}

process.on('message', (message: ToJobHost) => {
  if (message.type === 'start') {
    start(message).catch((err: Error) => exit({ type: 'failed', message: err.message }, 1));
  } else if (message.type === 'stop') {
    stop(message.savepointId).catch((err: Error) => exit({ type: 'failed', message: `stop failed: ${err.message}` }, 1));
  } else if (message.type === 'savepoint') {
    if (!checkpointer) return send({ type: 'savepoint-failed', savepointId: message.savepointId, message: 'the job is not running yet' });
    checkpointer.savepoint(message.savepointId).catch((err: Error) =>
      send({ type: 'savepoint-failed', savepointId: message.savepointId, message: err.message }),
    );
  }
});
// The supervisor went away: nothing may keep running unsupervised.
process.on('disconnect', () => process.exit(1));

/**
 * A job host: the child process that runs one process of one tenant's job run. It is the isolation boundary between
 * tenants (no two tenants' code shares a process) and between a job's failure and the worker. It talks to its
 * supervisor over IPC and to the run's other processes over the run control channel (runs/). It restores its
 * subtasks from the run's restore point, takes part in the run's checkpoints (process 0 leads them), and commits its
 * exactly-once sinks when a checkpoint completes.
 */
import { join } from 'node:path';
import { CheckpointStore, type CheckpointManifest } from '@weir/checkpoint';
import { loadConfig } from '@weir/config';
import { type JobDefinition, type KeySplit, operatorIdsOf, runJob, type RunningJob } from '@weir/engine';
import { createKafkaConnector } from '@weir/kafka';
import { createStateBackend, type CheckpointableStateBackend } from '@weir/state';
import { isBlobReply } from '../blob-broker/blob-wire';
import { BrokeredBlobStore } from '../blob-broker/brokered-blob-store';
import { loadBundle } from '../bundles/load-bundle';
import { CheckpointLeader, DEFAULT_CHECKPOINT_TIMEOUT_MS, READY_REPEAT_MS } from '../checkpoints/checkpoint-leader';
import { CheckpointParticipant } from '../checkpoints/checkpoint-participant';
import { commitRestoredEpochs } from '../checkpoints/commit-markers';
import { nextCheckpointId } from '../checkpoints/next-checkpoint-id';
import { LATEST_CHECKPOINT, loadRestorePoint } from '../checkpoints/restore-point';
import { restorableSnapshot } from '../checkpoints/restorable-snapshot';
import { BootstrapRelay } from '../runs/bootstrap-relay';
import { KafkaRunControl } from '../runs/kafka-run-control';
import { KeyGroupMover, MoveLeader } from '../runs/key-group-mover';
import { PartitionMover, PartitionMoveLeader } from '../runs/partition-mover';
import { LocalRunControl, type RunControlChannel } from '../runs/run-control';
import { localSubtasks, ownsSinkEpoch } from '../runs/process-layout';
import { RescaleLeader } from '../runs/rescale-leader';
import { RescaleRefusedError, windowsStayPut } from '../runs/rescale-plan';
import type { FromJobHost, MoveMessage, RescaleMessage, SplitKeysMessage, StartJobMessage, ToJobHost } from './ipc';
import { ALIVE_INTERVAL_MS } from './job-host-limits';
import { hardenBeforeTenantCode } from './job-host-hardening';
import { assertTopicsInNamespace } from './topic-namespace';

const METRICS_INTERVAL_MS = 1_000;
/** A live move not done within this long is given up (and the run restored): key groups move in milliseconds. */
const MOVE_TIMEOUT_MS = 60_000;

function send(message: FromJobHost): void {
  process.send?.(message);
}

/** The job host's object store: the worker's, over IPC (it holds the S3 credentials; this process has none). */
const blobs = new BrokeredBlobStore(
  process.env.WEIR_S3_BUCKET ?? 'weir',
  (request) => new Promise<void>((resolve, reject) => process.send!(request, (err: Error | null) => (err ? reject(err) : resolve()))),
);

// From its first moment, loaded and waiting included: the worker kills a job host that stops saying this.
send({ type: 'alive' });
setInterval(() => send({ type: 'alive' }), ALIVE_INTERVAL_MS).unref();

let job: RunningJob | undefined;
let leader: CheckpointLeader | null = null;
let moveLeader: MoveLeader | null = null;
let partitionMoveLeader: PartitionMoveLeader | null = null;
let rescaleLeader: RescaleLeader | null = null;
/** The run's parallelism map as this process was started with it (a rescale's report starts from it). */
let runParallelism: Readonly<Record<string, number>> = {};
let spreadOver = 1;
let participant: CheckpointParticipant | undefined;
let channel: RunControlChannel | undefined;
let bootstrapRelay: BootstrapRelay | null = null;
let metricsTimer: NodeJS.Timeout | undefined;
let readyTimer: NodeJS.Timeout | undefined;
let stopping: Promise<void> | null = null;
/** How long a process waits for the leader's verdict on a savepoint: the checkpoint timeout, and a margin. */
let verdictTimeoutMs = DEFAULT_CHECKPOINT_TIMEOUT_MS + 60_000;
/** The leader's verdict on each savepoint this process saw end (a follower's stop-with-savepoint waits for it). */
const savepointVerdicts = new Map<string, string | null>();
const verdictWaiters = new Map<string, ((failure: string | null) => void)[]>();

async function start(message: StartJobMessage): Promise<void> {
  const config = loadConfig();
  // The tenant's own Kafka identity where the platform has one for it (its ACLs reach only the tenant's topics).
  const brokers = message.kafka?.brokers ?? config.WEIR_KAFKA_BROKERS;
  // Before any tenant code runs: Kafka and S3 only, no credentials in the environment, no heap snapshots.
  hardenBeforeTenantCode(brokers);
  const definition = loadBundle(message.bundlePath, message.config);
  if (definition.maxParallelism !== message.maxParallelism) {
    throw new Error(`the bundle declares maxParallelism ${definition.maxParallelism}, the deployment ${message.maxParallelism}`);
  }
  assertGraphAsChecked(definition, message.operatorIds);
  // Tenant code may name any topic: refuse one outside the tenant's namespace before any reader, writer or restore.
  assertTopicsInNamespace(definition, message.tenantId, message.jobId, message.deadLetterTopic);
  const layout = message.process ?? { index: 0, count: 1 };
  const run = message.runNo ?? 0;
  const scope = { tenantId: message.tenantId, jobId: message.jobId };
  const kafka = createKafkaConnector({
    brokers,
    clientId: `${config.WEIR_KAFKA_CLIENT_ID}-${message.jobId}`,
    ...(message.kafka ? { sasl: message.kafka.credentials } : {}),
  });
  const store = new CheckpointStore(blobs);
  const operatorIds = definition.nodes.map((n) => n.id);
  const point = message.restoreFrom
    ? await loadRestorePoint(store, scope, message.restoreFrom, operatorIds, join(message.stateDir, 'restore'))
    : null;
  let restore;
  if (point) {
    // Exchange positions are offsets in this job's own exchange topics: another job's savepoint has none here.
    const sameJob = point.manifest.jobId === message.jobId && point.manifest.tenantId === message.tenantId;
    restore = restorableSnapshot(point.decoded.snapshot, definition, message.allowNonRestoredState ?? false, sameJob);
    // Epochs sealed in the checkpoint but not committed before the crash are committed now, exactly once, each by
    // the process that runs its sink subtask now (or by process 0 when no process does).
    const mine = point.decoded.sinkEpochs.filter((e) => ownsSinkEpoch(layout, e.subtask));
    const { committed } = await commitRestoredEpochs(kafka, scope.tenantId, scope.jobId, mine);
    send({ type: 'restored', checkpointId: point.checkpointId, manifestKey: point.manifestKey, skipped: point.skipped, recommittedEpochs: committed });
  }
  const checkpointing = message.checkpointing;
  verdictTimeoutMs = (checkpointing?.timeoutMs ?? DEFAULT_CHECKPOINT_TIMEOUT_MS) + 60_000;
  const backends = new Set<CheckpointableStateBackend>();
  const spread = layout.count > 1;
  const subtasks = localSubtasks(message.parallelism, message.subtasks ?? {});
  channel = spread ? new KafkaRunControl(kafka, { ...scope, run, process: layout.index }) : new LocalRunControl();
  // Over several processes a fresh run's data sources wait for every process's broadcast subtasks (the engine's bootstrap).
  const relay = spread ? new BootstrapRelay(layout.count, channel) : null;
  bootstrapRelay = relay;
  job = await runJob(definition, {
    tenantId: message.tenantId,
    jobId: message.jobId,
    parallelism: { default: 1, ...message.parallelism },
    kafka,
    deadLetterTopic: message.deadLetterTopic,
    delivery: checkpointing?.delivery ?? 'at-least-once',
    incarnation: run,
    ...(message.routing ? { routing: message.routing } : {}),
    ...(message.subtaskRecordsPerSecond ? { subtaskRecordsPerSecond: message.subtaskRecordsPerSecond } : {}),
    // A run over several processes: each runs its own subtasks, and keyed edges go through the Kafka exchange.
    ...(spread ? { exchange: 'kafka' as const, subtasks, bootstrapPeers: relay! } : {}),
    ...(message.joining ? { joining: message.joining } : {}),
    ...(restore ? { restore } : {}),
    // A changelog per key group: checkpoints upload what changed, plus each key group's full image on its turn.
    state: async (ctx) => {
      // Recovering: the key groups of this subtask's stored chain continue it (the participant's chains alike).
      const seed = point?.chains.find((c) => c.operatorId === ctx.operatorId && c.subtask === ctx.subtask);
      const continueFrom = seed ? Object.keys(seed.index.bases).map(Number) : [];
      const path = join(message.stateDir, `${ctx.operatorId}-${ctx.subtask}`);
      const backend = await createStateBackend({ kind: 'lsm', path, changelog: { continueFrom } });
      backends.add(backend);
      return backend;
    },
  });
  const running = job;
  spreadOver = layout.count;
  runParallelism = message.parallelism;
  const mine = message.subtasks;
  const runsHere = (operatorId: string, subtask: number) => (mine ? (mine[operatorId] ?? []).includes(subtask) : true);
  const mover = new KeyGroupMover(running, blobs, scope, channel, runsHere);
  const partitionMover = new PartitionMover(running, channel, runsHere);
  participant = new CheckpointParticipant(
    running,
    store,
    scope,
    channel,
    {
      process: layout.index,
      maxParallelism: definition.maxParallelism,
      requestFullCheckpoint: () => backends.forEach((b) => b.requestFullCheckpoint()),
      ...(point && point.chains.length > 0 ? { seeds: point.chains, restored: { checkpointId: point.checkpointId, files: filesOf(point.manifest) } } : {}),
      ...(message.joining ? { joining: true } : {}),
    },
    {
      completed: (done, durationMs) => {
        if (done.savepointId) settleSavepoint(done.savepointId, null);
        send({ type: 'checkpoint', checkpointId: done.checkpointId, savepointId: done.savepointId ?? null, manifestKey: done.savepointKey ?? done.manifestKey, durationMs });
      },
      failed: (checkpointId, reason, savepointId) => {
        if (savepointId) settleSavepoint(savepointId, reason);
        send({ type: 'checkpoint-failed', checkpointId, message: reason });
      },
      // A stop-with-savepoint of the run: every process stops once the savepoint is on S3.
      stopRequested: () => void shutdown(),
    },
  );
  if (layout.index === 0) {
    leader = new CheckpointLeader(
      store,
      scope,
      channel,
      await nextCheckpointId(store, scope, point?.checkpointId ?? null),
      {
        processes: layout.count,
        maxParallelism: definition.maxParallelism,
        intervalMs: checkpointing?.intervalMs ?? 0,
        retain: checkpointing?.retain ?? 3,
        timeoutMs: checkpointing?.timeoutMs ?? DEFAULT_CHECKPOINT_TIMEOUT_MS,
      },
      { retentionFailed: (err) => process.stderr.write(`checkpoint retention failed: ${err.message}\n`) },
      point?.checkpointId ?? null,
    );
    moveLeader = new MoveLeader(channel);
    partitionMoveLeader = new PartitionMoveLeader(channel);
    rescaleLeader = new RescaleLeader(running, leader, moveLeader, partitionMoveLeader, MOVE_TIMEOUT_MS);
  }
  let acknowledged = layout.index === 0;
  await channel.start(({ from, message: m }) => {
    leader?.onDelivery({ from, message: m });
    moveLeader?.onDelivery({ from, message: m });
    partitionMoveLeader?.onDelivery({ from, message: m });
    if (m.type === 'split-keys' && from !== layout.index) applySplits(running, m.operatorId, m.splits);
    if (m.type === 'resize') {
      const ended = resizeStages(running, m.stages);
      // A retiree says so once its ends are on their way: process 0 reports the rescale only then.
      if (layout.index >= m.processes) void ended.then(() => channel!.publish({ type: 'retired' })).catch(() => undefined);
    }
    participant!.onMessage(m);
    mover.onMessage(m);
    partitionMover.onMessage(m);
    relay?.onMessage(m);
    if (m.type === 'hello' && m.ready.includes(layout.index)) acknowledged = true;
  });
  if (!acknowledged) {
    // Until the leader has heard this process, it triggers nothing: a barrier must reach every process's sources.
    const ready = () => {
      if (acknowledged || stopping) return;
      void channel!.publish({ type: 'ready' }).catch(() => undefined);
      readyTimer = setTimeout(ready, READY_REPEAT_MS);
    };
    ready();
  }
  if (checkpointing && checkpointing.intervalMs > 0) leader?.start(Boolean(point) && message.restoreFrom?.snapshotId !== LATEST_CHECKPOINT);
  send({ type: 'started', subtasks: running.metrics().map((s) => ({ operatorId: s.operatorId, subtask: s.subtask })) });
  metricsTimer = setInterval(() => send({ type: 'metrics', snapshots: running.metrics() }), METRICS_INTERVAL_MS);
  running.done.then(
    () => exit({ type: 'finished' }, 0),
    (err: Error) => exit({ type: 'failed', message: err.message }, 1),
  );
}

/**
 * Stops this process. With a savepoint: the leader (process 0) takes it for the whole run, every source pausing at
 * its barrier; the others wait for the leader's verdict. A savepoint that fails leaves the job running (the
 * supervisor then decides whether to stop all the same).
 */
async function stop(savepointId: string | undefined): Promise<void> {
  if (!job) return exit({ type: 'finished' }, 0);
  if (savepointId) {
    // The leader triggers it; every process, the leader too, stops once its own sinks committed the savepoint's epoch.
    const triggered = leader ? leader.savepoint(savepointId, true).then(() => null, (err: Error) => err.message) : Promise.resolve(null);
    const failure = (await triggered) ?? (await verdictOn(savepointId, verdictTimeoutMs));
    if (failure !== null) {
      send({ type: 'savepoint-failed', savepointId, message: failure });
      return;
    }
  }
  await shutdown();
}

/**
 * A live move of key groups (process 0 only: it leads the run). In one process the engine moves them in memory;
 * over several, between two checkpoints, through the run control channel. A move that fails half-way leaves a key
 * group with no owner: this job host then dies without a word (LOST), and the control plane restores the run from
 * its latest checkpoint, which predates the move.
 */
async function move(message: MoveMessage): Promise<void> {
  const running = job;
  if (!running || !leader || !moveLeader) {
    return send({ type: 'move-failed', moveId: message.moveId, message: running ? 'only process 0 of a run moves key groups' : 'the job is not running yet' });
  }
  // Refused before anything moves: the run goes on as it was.
  if (spreadOver > 1 && running.shape().some((s) => s.id === message.operatorId && s.windows)) {
    return send({ type: 'move-failed', moveId: message.moveId, message: windowsStayPut(message.operatorId) });
  }
  const startedAt = Date.now();
  try {
    if (spreadOver === 1) {
      await leader.between(() => running.moveKeyGroups(message.operatorId, message.moves.map((m) => ({ keyGroup: m.keyGroup, toSubtask: m.toSubtask }))));
      const durationMs = Date.now() - startedAt;
      const moved = message.moves.map((m) => ({ ...m, bytes: 0, pauseMs: durationMs }));
      return send({ type: 'moved', report: { moveId: message.moveId, operatorId: message.operatorId, moved, durationMs } });
    }
    const leadMove = moveLeader;
    const report = await leader.between(() => leadMove.lead(message.moveId, message.operatorId, message.moves, MOVE_TIMEOUT_MS));
    send({ type: 'moved', report });
  } catch (err) {
    send({ type: 'move-failed', moveId: message.moveId, message: (err as Error).message });
    process.stderr.write(`job host ${process.pid}: move ${message.moveId} failed (${(err as Error).message}); leaving the run to be restored\n`);
    setTimeout(() => process.exit(70), 50);
  }
}

/**
 * A live rescale of the run (process 0 only). A refusal changes nothing and the run goes on; a failure after it
 * began (a joiner that never came, a move that failed half-way) leaves the job host to die unannounced (LOST), and
 * the control plane restores the run from its latest checkpoint at the new parallelism.
 */
async function rescale(message: RescaleMessage): Promise<void> {
  const lead = rescaleLeader;
  if (!lead || !job) {
    return send({ type: 'rescale-failed', rescaleId: message.rescaleId, message: job ? 'only process 0 of a run rescales it' : 'the job is not running yet', refused: true });
  }
  const command = { rescaleId: message.rescaleId, fromProcesses: spreadOver, toProcesses: message.processes, parallelism: message.parallelism, runParallelism };
  let planned;
  try {
    planned = lead.plan(command);
  } catch (err) {
    if (!(err instanceof RescaleRefusedError)) throw err;
    return send({ type: 'rescale-failed', rescaleId: message.rescaleId, message: err.message, refused: true });
  }
  try {
    const report = await lead.lead(command, planned, (p) => send({ type: 'rescale-progress', rescaleId: message.rescaleId, ...p }));
    spreadOver = message.processes;
    runParallelism = report.parallelism;
    send({ type: 'rescaled', report });
  } catch (err) {
    send({ type: 'rescale-failed', rescaleId: message.rescaleId, message: (err as Error).message, refused: false });
    process.stderr.write(`job host ${process.pid}: rescale ${message.rescaleId} failed (${(err as Error).message}); leaving the run to be restored\n`);
    setTimeout(() => process.exit(70), 50);
  }
}

/**
 * A splittable window's split keys (process 0 only): applied here first, so that a bad table is refused before any
 * other process sees it, then handed to every process of the run over its control channel.
 */
async function splitKeys(message: SplitKeysMessage): Promise<void> {
  const running = job;
  if (!running || !leader) {
    return send({ type: 'split-failed', splitId: message.splitId, message: running ? 'only process 0 of a run splits keys' : 'the job is not running yet' });
  }
  try {
    running.splitKeys(message.operatorId, message.splits);
  } catch (err) {
    return send({ type: 'split-failed', splitId: message.splitId, message: (err as Error).message });
  }
  await channel!.publish({ type: 'split-keys', operatorId: message.operatorId, splits: message.splits });
  send({ type: 'keys-split', splitId: message.splitId });
}

/** Another process's table, as process 0 applied it: it was valid there, so a failure here is this process's bug. */
function applySplits(running: RunningJob, operatorId: string, splits: readonly KeySplit[]): void {
  try {
    running.splitKeys(operatorId, splits);
  } catch (err) {
    process.stderr.write(`job host ${process.pid}: could not split keys of "${operatorId}": ${(err as Error).message}\n`);
  }
}

/** A live rescale's new sizes, applied before the next checkpoint's trigger (the channel delivers them in order). */
async function resizeStages(running: RunningJob, stages: Readonly<Record<string, number>>): Promise<void> {
  for (const [stageId, parallelism] of Object.entries(stages)) {
    try {
      await running.resizeStage(stageId, parallelism);
    } catch (err) {
      process.stderr.write(`job host ${process.pid}: could not resize "${stageId}" to ${parallelism}: ${(err as Error).message}\n`);
    }
  }
}

/** Stops checkpointing and the job (once, however many ask). The job's end then exits the process. */
function shutdown(): Promise<void> {
  stopping ??= (async () => {
    clearTimeout(readyTimer);
    bootstrapRelay?.close();
    await leader?.stop();
    await participant?.drain();
    // No metrics from a stopping job: stop() destroys its latency recorders, and a snapshot taken after that throws.
    clearInterval(metricsTimer);
    await job?.stop();
    await channel?.close();
  })();
  return stopping;
}

function settleSavepoint(savepointId: string, failure: string | null): void {
  savepointVerdicts.set(savepointId, failure);
  for (const resolve of verdictWaiters.get(savepointId) ?? []) resolve(failure);
  verdictWaiters.delete(savepointId);
}

/**
 * The leader's verdict on a savepoint: null once it is on S3, else why it failed. Bounded: a leader that died says
 * nothing, and this process must then stop all the same (the control plane re-places the run).
 */
function verdictOn(savepointId: string, timeoutMs: number): Promise<string | null> {
  if (savepointVerdicts.has(savepointId)) return Promise.resolve(savepointVerdicts.get(savepointId)!);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(`no word from the run's process 0 on savepoint ${savepointId} within ${timeoutMs / 1000} s`), timeoutMs);
    const done = (failure: string | null) => {
      clearTimeout(timer);
      resolve(failure);
    };
    verdictWaiters.set(savepointId, [...(verdictWaiters.get(savepointId) ?? []), done]);
  });
}

function filesOf(manifest: CheckpointManifest): Set<string> {
  const files = new Set<string>();
  for (const o of manifest.operators) for (const s of o.subtasks) for (const f of [...s.files, ...s.metadata]) files.add(f.sha256);
  return files;
}

function exit(last: FromJobHost, code: number): void {
  clearInterval(metricsTimer);
  clearTimeout(readyTimer);
  // The deployment's reason points at the worker's log for the error: this is where it is written.
  if (last.type === 'failed') process.stderr.write(`job host ${process.pid} failed: ${last.message}\n`);
  send(last);
  // Let IPC flush before leaving.
  setTimeout(() => process.exit(code), 50);
}

/**
 * The upload check read the bundle's job in an isolate (libs/sandbox); here it is built again, in the job host. A
 * bundle that builds another graph here than there can tell the two apart: refused before it starts anything.
 */
function assertGraphAsChecked(definition: JobDefinition, manifest: readonly string[] | undefined): void {
  if (!manifest) return;
  const built = operatorIdsOf(definition);
  const named = new Set(manifest);
  if (built.length !== named.size || built.some((id) => !named.has(id))) {
    throw new Error(
      `the bundle's job has the operators ${JSON.stringify(built)} here, but its manifest (checked against the bundle at upload) names ${JSON.stringify([...manifest])}: the bundle builds another graph on the worker than when it was checked`,
    );
  }
}

process.on('message', (message: ToJobHost) => {
  if (isBlobReply(message)) {
    blobs.onReply(message);
  } else if (message.type === 'start') {
    // A spare's earlier alives went to no one: this one arms the worker's stall watch before the bundle loads.
    send({ type: 'alive' });
    start(message).catch((err: Error) => exit({ type: 'failed', message: err.message }, 1));
  } else if (message.type === 'stop') {
    stop(message.savepointId).catch((err: Error) => exit({ type: 'failed', message: `stop failed: ${err.message}` }, 1));
  } else if (message.type === 'move') {
    void move(message);
  } else if (message.type === 'split-keys') {
    splitKeys(message).catch((err: Error) => send({ type: 'split-failed', splitId: message.splitId, message: err.message }));
  } else if (message.type === 'rescale') {
    rescale(message).catch((err: Error) => send({ type: 'rescale-failed', rescaleId: message.rescaleId, message: err.message, refused: true }));
  } else if (message.type === 'savepoint') {
    if (!leader) return send({ type: 'savepoint-failed', savepointId: message.savepointId, message: job ? 'only process 0 of a run takes savepoints' : 'the job is not running yet' });
    leader.savepoint(message.savepointId).catch((err: Error) =>
      send({ type: 'savepoint-failed', savepointId: message.savepointId, message: err.message }),
    );
  }
});
// The supervisor went away: nothing may keep running unsupervised.
process.on('disconnect', () => process.exit(1));

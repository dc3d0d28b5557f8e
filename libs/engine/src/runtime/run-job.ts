/**
 * runJob: plans a job definition into stages and runs this process's subtasks of them. The pieces live apart:
 * job-assembly.ts builds each subtask, connectors/connector-registry.ts every source and sink by kind,
 * job-control.ts checkpoints and moves; this file is the lifecycle (start, done, stop) and the job's face.
 */
import type { KafkaConnector, TopicSpec } from '@weir/kafka';
import type { SubtaskMetricsSnapshot } from '@weir/metrics';
import { type KeySplit, KeySplits, RoutingTable } from '../keygroups';
import type { JobDefinition } from '../sdk/graph';
import { BroadcastBootstrap } from './broadcast-bootstrap';
import { CheckpointCoordinator } from './checkpoint-coordinator';
import { ConnectorRegistry } from './connectors/connector-registry';
import { sinkCommitsTopic } from './connectors/exactly-once-sink';
import type { SourceOutput } from './connectors/source-output';
import type { PartitionHandover } from './connectors/sources';
import type { KeyGroupMove } from './exchange/exchange';
import { exchangeTopic } from './exchange/kafka-exchange-wire';
import { MemoryBroadcastExchange, MemoryKeyedExchange } from './exchange/memory-exchange';
import { JobAssembly } from './job-assembly';
import { JobControl } from './job-control';
import { type JobMemoryIo, MEMORY_IO } from './memory-io';
import type { KeyGroupHandover } from './key-group-moves';
import { isSplittable, type JobPlan, planJob, type SourceNode, sourceRescalesLive } from './plan';
import { type Clock, systemClock } from './ports';
import { InFlight, InputQueue } from './queue';
import { type CheckpointSnapshot, JobRunError, type RunJobOptions, type RunningJob, type StageShape } from './running-job';
import { present, type StageRuntime } from './stage-runtime';

export { JobRunError } from './running-job';
export type { CheckpointSnapshot, MemorySourceRecord, RunJobOptions, RunningJob, StageShape, SubtaskContext } from './running-job';

/** Starts a job in this process: every stage's subtasks (or those `subtasks` names), exchanges, sources pumping. */
export async function runJob(definition: JobDefinition, options: RunJobOptions): Promise<RunningJob> {
  const clock = options.clock ?? systemClock;
  if (options.exchange === 'kafka' && !options.kafka) throw new JobRunError('the Kafka exchange needs a KafkaConnector');
  if (options.subtasks && options.exchange !== 'kafka') {
    throw new JobRunError('running a subset of subtasks needs the Kafka exchange (exchange: "kafka")');
  }
  const partitions = await kafkaPartitionCounts(definition, options.kafka);
  const sourceWidth = (node: SourceNode, asked: number) => (node.spec.kind === 'kafka' ? Math.max(1, Math.min(asked, partitions.get(node.id)!)) : asked);
  let plan = planJob(definition, options.parallelism ?? 1, sourceWidth);
  const joining = options.joining;
  if (joining) {
    // Joining a running run: a source that cannot rescale live keeps the subtasks it has (none of them here).
    const kept = plan.stages.filter((s) => s.root.kind === 'source' && !sourceRescalesLive(plan, s) && joining.parallelism[s.id] !== undefined);
    if (kept.length > 0) {
      const asked = options.parallelism ?? 1;
      const widths = typeof asked === 'number' ? { default: asked } : asked;
      plan = planJob(definition, { ...widths, ...Object.fromEntries(kept.map((s) => [s.id, joining.parallelism[s.id]])) }, sourceWidth);
    }
  }
  return new JobInstance(definition, options, clock, plan, partitions).start();
}

async function kafkaPartitionCounts(definition: JobDefinition, kafka: KafkaConnector | undefined): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const kafkaNodes = definition.nodes.filter((n) => (n.kind === 'source' || n.kind === 'sink') && n.spec.kind === 'kafka');
  if (kafkaNodes.length === 0) return counts;
  if (!kafka) throw new JobRunError(`job "${definition.name}" reads or writes Kafka but no KafkaConnector was given`);
  const admin = kafka.admin();
  try {
    for (const n of kafkaNodes) {
      if (n.kind === 'source' && n.spec.kind === 'kafka') counts.set(n.id, await admin.partitionCount(n.spec.topic));
    }
  } finally {
    await admin.close();
  }
  return counts;
}

class JobInstance implements RunningJob {
  readonly tenantId: string;
  readonly jobId: string;
  done!: Promise<void>;
  private readonly inFlight = new InFlight();
  private readonly stages = new Map<string, StageRuntime>();
  private readonly connectors: ConnectorRegistry;
  private readonly checkpoints = new CheckpointCoordinator();
  private readonly control: JobControl;
  private stopping: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly definition: JobDefinition,
    private readonly options: RunJobOptions,
    private readonly clock: Clock,
    private readonly plan: JobPlan,
    private readonly partitions: Map<string, number>,
  ) {
    this.tenantId = options.tenantId;
    this.jobId = options.jobId;
    this.connectors = new ConnectorRegistry(options, partitions);
    this.control = new JobControl(this.jobId, plan, this.stages, this.checkpoints, this.connectors.epochWriters);
  }

  async start(): Promise<this> {
    const capacity = this.options.queueCapacity ?? 20_000;
    for (const stage of this.plan.stages) {
      const queues = Array.from({ length: stage.parallelism }, () => new InputQueue(capacity, this.inFlight));
      this.stages.set(stage.id, {
        plan: stage,
        queues,
        local: this.localSubtasks(stage),
        subtasks: [],
        operators: [],
        backends: [],
        metrics: [],
        pumps: [],
        memoryInputs: [],
        keyedSenders: [],
        splits: KeySplits.NONE,
        ...(stage.root.kind === 'source' ? { sourceParallelism: stage.parallelism } : {}),
      });
    }
    const unknown = [...new Set((this.options.restore?.subtasks ?? []).map((p) => p.stageId))].filter((id) => !this.stages.has(id));
    if (unknown.length > 0) {
      throw new JobRunError(`the checkpoint holds state of operators this job does not have: ${unknown.join(', ')}`);
    }
    const kafkaExchange = this.options.exchange === 'kafka';
    await this.ensureTopics(this.layOutExchanges(kafkaExchange));
    // Sources read through a pump count; a memory source has nothing available at start (the test driver pushes).
    // Over the Kafka exchange the data sources wait for the whole run's broadcast subtasks, heard of through peers.
    const peers = kafkaExchange ? this.options.bootstrapPeers : undefined;
    const fresh = !this.options.restore && !this.options.joining && (!kafkaExchange || peers !== undefined);
    const bootstrap = fresh
      ? new BroadcastBootstrap(
          this.plan,
          (s) => (s.root.kind === 'source' && s.root.spec.kind !== 'memory' ? (peers ? Array.from({ length: s.parallelism }, (_, i) => i) : this.stages.get(s.id)!.local) : []),
          peers,
        )
      : null;
    const assembly = new JobAssembly(this.definition, this.plan, this.options, this.clock, this.stages, this.connectors, this.checkpoints, bootstrap);
    try {
      for (const rt of this.stages.values()) {
        for (const i of rt.local) await assembly.buildSubtask(rt, i);
      }
      // Fence zombies of every exactly-once sink subtask before anything runs.
      await Promise.all(this.connectors.epochWriters.map((w) => w.start()));
    } catch (err) {
      await this.closeAll();
      throw err;
    }
    const runs: Promise<void>[] = [];
    for (const rt of this.stages.values()) {
      for (const s of present(rt.subtasks)) runs.push(s.run());
      for (const p of present(rt.pumps)) runs.push(p.run());
    }
    this.done = Promise.all(runs).then(
      () => this.closeAll(),
      async (err) => {
        this.halt();
        await this.closeAll();
        throw new JobRunError(`job ${this.jobId} failed: ${(err as Error).message}`, { cause: err });
      },
    );
    this.done.catch(() => undefined);
    return this;
  }

  /**
   * The subtasks of a stage this process runs. A Kafka source has at most one subtask per partition, so indexes past
   * its (capped) parallelism are left out rather than refused: every process of a job may name the same indexes.
   */
  private localSubtasks(stage: JobPlan['stages'][number]): number[] {
    if (this.options.joining && stage.root.kind === 'source' && !sourceRescalesLive(this.plan, stage)) return [];
    const named = this.options.subtasks?.[stage.id];
    if (!named) return Array.from({ length: stage.parallelism }, (_, i) => i);
    const capped = stage.root.kind === 'source' && stage.root.spec.kind === 'kafka';
    for (const i of named) {
      if (!Number.isInteger(i) || i < 0 || (i >= stage.parallelism && !capped)) {
        throw new JobRunError(`stage "${stage.id}" has ${stage.parallelism} subtasks; subtask ${i} does not exist`);
      }
    }
    return named.filter((i) => i < stage.parallelism);
  }

  /** Routing tables and exchanges of the keyed stages; returns the topics the Kafka exchange and sinks need. */
  private layOutExchanges(kafkaExchange: boolean): TopicSpec[] {
    const topics: TopicSpec[] = [];
    for (const rt of this.stages.values()) {
      if (rt.plan.root.kind === 'source') continue;
      const owners = this.options.routing?.[rt.plan.id];
      if (owners && owners.length !== this.definition.maxParallelism) {
        throw new JobRunError(`routing of "${rt.plan.id}" names ${owners.length} key groups; the job has ${this.definition.maxParallelism}`);
      }
      rt.routing = owners
        ? RoutingTable.fromOwners(1, rt.plan.parallelism, owners)
        : RoutingTable.initial(rt.plan.parallelism, this.definition.maxParallelism);
      const owning = this.options.joining ? rt.local.filter((i) => rt.routing!.keyGroupsOf(i).length > 0) : [];
      if (owning.length > 0) {
        throw new JobRunError(
          `a process joining its run starts owning nothing, but the routing of "${rt.plan.id}" gives key groups to its subtask ${owning[0]}: pass the run's routing as it stands`,
        );
      }
      if (kafkaExchange) {
        rt.topic = exchangeTopic(this.tenantId, this.jobId, rt.plan.id);
        topics.push({ topic: rt.topic, partitions: this.definition.maxParallelism });
      } else {
        rt.exchange = new MemoryKeyedExchange(rt.queues, rt.routing);
        if (rt.plan.broadcastInput) rt.broadcast = new MemoryBroadcastExchange(rt.queues);
      }
    }
    if (this.options.delivery === 'exactly-once' && this.definition.nodes.some((n) => n.kind === 'sink' && n.spec.kind === 'kafka')) {
      // Compacted: only the last marker per sink subtask matters to a restore.
      topics.push({ topic: sinkCommitsTopic(this.tenantId, this.jobId), partitions: 1, config: { 'cleanup.policy': 'compact' } });
    }
    return topics;
  }

  private async ensureTopics(topics: readonly TopicSpec[]): Promise<void> {
    if (topics.length === 0) return;
    const admin = this.options.kafka!.admin();
    try {
      await admin.ensureTopics(topics);
    } finally {
      await admin.close();
    }
  }

  metrics(): SubtaskMetricsSnapshot[] {
    const now = this.clock.now();
    const out: SubtaskMetricsSnapshot[] = [];
    for (const rt of this.stages.values()) {
      // A Kafka source subtask's backlog rides along: the autoscaler drains it (other subtasks report null).
      // A splittable window's subtasks say what this process splits (the control plane plans on what is in effect).
      // and a window's that it is one (the partitioner does not move its key groups live).
      const windows = rt.plan.root.kind === 'window';
      const splittable = isSplittable(rt.plan);
      for (const i of rt.local) {
        const snapshot = rt.metrics[i].snapshot(now, rt.subtasks[i].currentWatermark, rt.pumps[i]?.backlog?.() ?? null);
        out.push(windows ? { ...snapshot, windows: true, ...(splittable ? { keySplits: rt.splits.splits } : {}) } : snapshot);
      }
    }
    return out;
  }

  triggerCheckpoint(checkpointId: number): Promise<CheckpointSnapshot> {
    return this.control.triggerCheckpoint(checkpointId);
  }

  completeCheckpoint(checkpointId: number): Promise<void> {
    return this.control.completeCheckpoint(checkpointId);
  }

  pauseSourcesAfterNextBarrier(): void {
    this.control.pauseSourcesAfterNextBarrier();
  }

  resumeSources(): void {
    this.control.resumeSources();
  }

  routingTable(operatorId: string): RoutingTable {
    return this.control.routingTable(operatorId);
  }

  shape(): StageShape[] {
    return this.plan.stages.map((stage) => {
      const operatorIds: string[] = [];
      const feeds = new Set<string>();
      const broadcastFeeds = new Set<string>();
      const walk = (id: string): void => {
        operatorIds.push(id);
        const broadcast = this.plan.nodes.get(id)?.kind === 'broadcast';
        for (const child of this.plan.children.get(id) ?? []) {
          if (child.kind === 'process' || child.kind === 'window' || child.kind === 'broadcastProcess') (broadcast ? broadcastFeeds : feeds).add(child.id);
          else walk(child.id);
        }
      };
      walk(stage.id);
      const keyed = stage.root.kind !== 'source';
      const parallelism = keyed ? this.control.routingTable(stage.id).parallelism : this.stages.get(stage.id)!.sourceParallelism!;
      const shape: StageShape = {
        id: stage.id,
        kind: keyed ? 'keyed' : 'source',
        parallelism,
        operatorIds,
        feeds: [...feeds],
        broadcastFeeds: [...broadcastFeeds],
        ...(stage.root.kind === 'window' ? { windows: true as const } : {}),
        ...(isSplittable(stage) ? { splittable: true as const } : {}),
      };
      return sourceRescalesLive(this.plan, stage) ? { ...shape, partitions: this.partitions.get(stage.id)! } : shape;
    });
  }

  moveKeyGroups(operatorId: string, moves: readonly KeyGroupMove[]): Promise<RoutingTable> {
    return this.control.moveKeyGroups(operatorId, moves);
  }

  splitKeys(operatorId: string, splits: readonly KeySplit[]): void {
    this.control.splitKeys(operatorId, splits);
  }

  keySplits(operatorId: string): readonly KeySplit[] {
    return this.control.keySplits(operatorId);
  }

  routeKeyGroup(operatorId: string, keyGroup: number, toSubtask: number): void {
    this.control.routeKeyGroup(operatorId, keyGroup, toSubtask);
  }

  resizeStage(stageId: string, parallelism: number): Promise<void> {
    return this.control.resizeStage(stageId, parallelism);
  }

  releaseSourcePartition(sourceId: string, partition: number): Promise<PartitionHandover> {
    return this.control.releaseSourcePartition(sourceId, partition);
  }

  adoptSourcePartition(sourceId: string, partition: number, toSubtask: number, handover: PartitionHandover): Promise<void> {
    return this.control.adoptSourcePartition(sourceId, partition, toSubtask, handover);
  }

  releaseKeyGroup(operatorId: string, keyGroup: number, toSubtask: number): Promise<KeyGroupHandover> {
    return this.control.releaseKeyGroup(operatorId, keyGroup, toSubtask);
  }

  adoptKeyGroup(operatorId: string, keyGroup: number, toSubtask: number, handover: KeyGroupHandover): Promise<void> {
    return this.control.adoptKeyGroup(operatorId, keyGroup, toSubtask, handover);
  }

  snapshotKeyGroup(operatorId: string, keyGroup: number): Promise<Uint8Array> {
    return this.control.snapshotKeyGroup(operatorId, keyGroup);
  }

  restoreKeyGroup(operatorId: string, keyGroup: number, image: Uint8Array): Promise<void> {
    return this.control.restoreKeyGroup(operatorId, keyGroup, image);
  }

  sourcePositions(): Record<string, Record<string, string>[]> {
    const out: Record<string, Record<string, string>[]> = {};
    for (const rt of this.stages.values()) {
      if (rt.plan.root.kind === 'source' && rt.pumps.length > 0) {
        out[rt.plan.id] = present(rt.pumps).map((p) => Object.fromEntries(p.positions()));
      }
    }
    return out;
  }

  /** The test driver's in-memory I/O (memory-io.ts): not part of RunningJob. */
  readonly [MEMORY_IO]: JobMemoryIo = {
    push: (sourceId, records, subtask = 0) => {
      const input = this.memoryInput(sourceId, subtask);
      const now = this.clock.now();
      void input.emit(0, { values: records.map((r) => r.value), timestamps: records.map((r) => r.timestamp ?? now) });
    },
    pushWatermark: (sourceId, watermark, subtask = 0) => this.memoryInput(sourceId, subtask).watermark(watermark),
    endSource: (sourceId) => {
      const rt = this.stages.get(sourceId);
      if (!rt) throw new JobRunError(`no source "${sourceId}"`);
      for (const input of present(rt.memoryInputs)) input.end();
    },
    tick: () => {
      for (const rt of this.stages.values()) {
        for (const i of rt.local) rt.queues[i].offer({ kind: 'tick' });
        for (const input of present(rt.memoryInputs)) input.tick();
      }
    },
    quiet: () => this.inFlight.quiet(),
    collected: (sinkId) => this.connectors.collected(sinkId),
    deadLetters: () => this.connectors.memoryLetters,
  };

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.halt();
      await this.done.catch(() => undefined);
    })();
    return this.stopping;
  }

  private halt(): void {
    for (const rt of this.stages.values()) {
      for (const p of present(rt.pumps)) p.stop();
      for (const s of present(rt.subtasks)) s.stop();
      // Producers blocked on a full queue (backpressure) must wake up to see that they are stopped.
      for (const i of rt.local) rt.queues[i].close();
    }
  }

  private async closeAll(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.connectors.closeAll();
    for (const rt of this.stages.values()) {
      for (const b of present(rt.backends)) await b.close().catch(() => undefined);
      for (const m of present(rt.metrics)) m.close();
    }
  }

  private memoryInput(sourceId: string, subtask: number): SourceOutput {
    const input = this.stages.get(sourceId)?.memoryInputs[subtask];
    if (!input) throw new JobRunError(`no memory source "${sourceId}" subtask ${subtask}`);
    return input;
  }
}

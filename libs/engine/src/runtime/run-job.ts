import type { KafkaConnector, TopicSpec } from '@weir/kafka';
import { SubtaskMetrics, type SubtaskMetricsSnapshot } from '@weir/metrics';
import { RoutingTable } from '../keygroups';
import type { JobDefinition, NodeSpec } from '../sdk/graph';
import { JobDefinitionError } from '../sdk/stream';
import { BroadcastTerminal, type ChainNode, type ChainTerminal, KeyByTerminal, StatelessNode } from './chain';
import { KafkaDeadLetters, MemoryDeadLetters } from './connectors/dead-letters';
import { CallbackSinkWriter, type CollectedRecord, KafkaSinkWriter, MemorySinkWriter, type SinkWriter } from './connectors/sink-writers';
import { sinkTerminal } from './connectors/sink-terminals';
import { ExactlyOnceKafkaSinkWriter, sinkCommitsTopic } from './connectors/exactly-once-sink';
import { SourceOutput, type SourceRouter } from './connectors/source-output';
import { GeneratorPump, KafkaPump, type SourceBootstrap } from './connectors/sources';
import { BroadcastBootstrap } from './broadcast-bootstrap';
import type { BroadcastSender, KeyGroupMove, KeyedSender } from './exchange/exchange';
import { exchangeTopic, KafkaBroadcastSender, KafkaExchangePump, KafkaKeyedSender } from './exchange/kafka-exchange';
import { MemoryBroadcastExchange, MemoryKeyedExchange } from './exchange/memory-exchange';
import type { KeyedOperator, KeyedOperatorEnv } from './operators/keyed-operator';
import { BroadcastProcessOperator, ProcessOperator } from './operators/process-operator';
import { WindowOperator } from './operators/window-operator';
import { type JobPlan, planJob } from './plan';
import { type ChainEnvLike, type Clock, type DeadLetter, type DeadLetterQueue, systemClock } from './ports';
import { InFlight, InputQueue } from './queue';
import { Subtask } from './subtask';
import { restoredGeneratorIndex, restoredOffsets, restoredParts, restoreKeyed } from './restore';
import {
  type CheckpointSnapshot,
  JobRunError,
  type RunJobOptions,
  type RunningJob,
  type SubtaskContext,
} from './running-job';
import { present, type StageRuntime } from './stage-runtime';
import { CheckpointCoordinator } from './checkpoint-coordinator';
import { inBand } from './in-band';
import { KafkaKeyGroupMoves, moveInMemory } from './key-group-moves';

export { JobRunError } from './running-job';
export type { CheckpointSnapshot, MemorySourceRecord, RunJobOptions, RunningJob, SubtaskContext } from './running-job';

/** Starts a job in this process: every stage's subtasks, exchanges in memory, sources pumping. */
export async function runJob(definition: JobDefinition, options: RunJobOptions): Promise<RunningJob> {
  const clock = options.clock ?? systemClock;
  if (options.exchange === 'kafka' && !options.kafka) throw new JobRunError('the Kafka exchange needs a KafkaConnector');
  if (options.subtasks && options.exchange !== 'kafka') {
    throw new JobRunError('running a subset of subtasks needs the Kafka exchange (exchange: "kafka")');
  }
  const partitions = await kafkaPartitionCounts(definition, options.kafka);
  const plan = planJob(definition, options.parallelism ?? 1, (node, asked) =>
    node.spec.kind === 'kafka' ? Math.max(1, Math.min(asked, partitions.get(node.id)!)) : asked,
  );
  return new JobInstance(definition, options, clock, plan, partitions).start();
}

async function kafkaPartitionCounts(definition: JobDefinition, kafka: KafkaConnector | undefined): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const kafkaNodes = definition.nodes.filter(
    (n) => (n.kind === 'source' || n.kind === 'sink') && n.spec.kind === 'kafka',
  );
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
  private readonly sinks = new Map<string, CollectedRecord[]>();
  private readonly memoryLetters: DeadLetter[] = [];
  private readonly closables: (() => Promise<void>)[] = [];
  private stopping: Promise<void> | null = null;
  private readonly kafkaMoves = new KafkaKeyGroupMoves();
  private readonly checkpoints = new CheckpointCoordinator();
  /** Exactly-once sink subtasks: sealed at barriers, committed by completeCheckpoint. */
  private readonly epochWriters: ExactlyOnceKafkaSinkWriter[] = [];
  /** Fresh starts only: data sources wait for the broadcast inputs they meet (broadcast-bootstrap.ts). */
  private bootstrap: BroadcastBootstrap | null = null;

  constructor(
    private readonly definition: JobDefinition,
    private readonly options: RunJobOptions,
    private readonly clock: Clock,
    private readonly plan: JobPlan,
    private readonly partitions: Map<string, number>,
  ) {
    this.tenantId = options.tenantId;
    this.jobId = options.jobId;
  }

  async start(): Promise<this> {
    const capacity = this.options.queueCapacity ?? 20_000;
    for (const stage of this.plan.stages) {
      const queues = Array.from({ length: stage.parallelism }, () => new InputQueue(capacity, this.inFlight));
      const local = this.options.subtasks?.[stage.id] ?? Array.from({ length: stage.parallelism }, (_, i) => i);
      for (const i of local) {
        if (!Number.isInteger(i) || i < 0 || i >= stage.parallelism) {
          throw new JobRunError(`stage "${stage.id}" has ${stage.parallelism} subtasks; subtask ${i} does not exist`);
        }
      }
      this.stages.set(stage.id, {
        plan: stage,
        queues,
        local,
        subtasks: [],
        operators: [],
        backends: [],
        metrics: [],
        pumps: [],
        memoryInputs: [],
      });
    }
    const unknown = [...new Set((this.options.restore?.subtasks ?? []).map((p) => p.stageId))].filter((id) => !this.stages.has(id));
    if (unknown.length > 0) {
      throw new JobRunError(`the checkpoint holds state of operators this job does not have: ${unknown.join(', ')}`);
    }
    const kafkaExchange = this.options.exchange === 'kafka';
    if (!this.options.restore && !kafkaExchange) {
      // Sources read through a pump count; a memory source has nothing available at start (the test driver pushes).
      this.bootstrap = new BroadcastBootstrap(this.plan, (s) => (s.root.kind === 'source' && s.root.spec.kind !== 'memory' ? s.parallelism : 0));
    }
    const topics: TopicSpec[] = [];
    for (const rt of this.stages.values()) {
      if (rt.plan.root.kind === 'source') continue;
      rt.routing = RoutingTable.initial(rt.plan.parallelism, this.definition.maxParallelism);
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
    if (topics.length > 0) {
      const admin = this.options.kafka!.admin();
      try {
        await admin.ensureTopics(topics);
      } finally {
        await admin.close();
      }
    }
    try {
      for (const rt of this.stages.values()) {
        for (const i of rt.local) await this.buildSubtask(rt, i);
      }
      // Fence zombies of every exactly-once sink subtask before anything runs.
      await Promise.all(this.epochWriters.map((w) => w.start()));
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

  private async buildSubtask(rt: StageRuntime, index: number): Promise<void> {
    const stage = rt.plan;
    const root = stage.root;
    const metrics = new SubtaskMetrics({
      identity: { tenantId: this.tenantId, jobId: this.jobId, operatorId: stage.id, subtask: index },
      maxParallelism: this.definition.maxParallelism,
      nowMs: this.clock.now(),
    });
    rt.metrics[index] = metrics;
    const deadLetters = this.deadLetterQueue(stage.id, index, metrics);
    const env: ChainEnvLike = { tenantId: this.tenantId, jobId: this.jobId, subtask: index, clock: this.clock, deadLetters, metrics };
    const terminals: ChainTerminal[] = [];
    const sideOutputs = new Map<string, ChainNode[]>();
    const mainChildren = (this.plan.children.get(root.id) ?? []).filter((c) => {
      if (c.kind !== 'sideOutput') return true;
      sideOutputs.set(c.tag, this.buildChildren(c.id, env, terminals, rt));
      return false;
    });
    const head = mainChildren.flatMap((c) => this.buildNode(c, env, terminals, rt));
    let operator: KeyedOperator | undefined;
    if (root.kind === 'source') {
      this.buildSource(rt, index, env, fusedKeyBy(head));
    } else {
      const ctx: SubtaskContext = { tenantId: this.tenantId, jobId: this.jobId, operatorId: stage.id, subtask: index, parallelism: stage.parallelism };
      const backend = await this.options.state(ctx);
      rt.backends[index] = backend;
      const opEnv: KeyedOperatorEnv = {
        ...env,
        operatorId: root.id,
        parallelism: stage.parallelism,
        backend,
        maxParallelism: this.definition.maxParallelism,
        ownedKeyGroups: new Set(rt.routing!.keyGroupsOf(index)),
        emit: (records) => {
          for (const n of head) n.push(records);
        },
        emitSide: (tag, records) => {
          for (const n of sideOutputs.get(tag) ?? []) n.push(records);
        },
        // The subtask is built below; the operator only calls this while it runs.
        flushOutput: () => rt.subtasks[index]!.flushOutput(),
      };
      operator =
        root.kind === 'process'
          ? new ProcessOperator(opEnv, root.fn)
          : root.kind === 'broadcastProcess'
            ? new BroadcastProcessOperator(opEnv, root.fn)
            : new WindowOperator(opEnv, root.assigner, root.fn, root.options);
      rt.operators[index] = operator;
      await restoreKeyed(restoredParts(this.options.restore, stage.id), operator, backend, opEnv.ownedKeyGroups, index);
      if (rt.topic) {
        const readerId = `weir-${this.tenantId}-${this.jobId}-${stage.id}-${index}-exchange`;
        rt.pumps[index] = new KafkaExchangePump(
          this.options.kafka!,
          readerId,
          rt.topic,
          rt.routing!.keyGroupsOf(index),
          rt.queues[index],
          this.stages.get(stage.dataInput!.stageId)!.plan.parallelism,
          stage.broadcastInput ? this.stages.get(stage.broadcastInput.stageId)!.plan.parallelism : 0,
        );
      }
    }
    const upstream = stage.dataInput ? this.stages.get(stage.dataInput.stageId)!.plan.parallelism : 1;
    const broadcastChannels = stage.broadcastInput ? this.stages.get(stage.broadcastInput.stageId)!.plan.parallelism : 0;
    rt.subtasks[index] = new Subtask({
      stageId: stage.id,
      env,
      queue: rt.queues[index],
      head,
      terminals,
      operator,
      dataChannels: upstream,
      broadcastChannels,
      onSnapshot: (checkpointId, snapshot) => this.checkpoints.onSnapshot(checkpointId, snapshot),
    });
  }

  private buildChildren(nodeId: string, env: ChainEnvLike, terminals: ChainTerminal[], rt: StageRuntime): ChainNode[] {
    return (this.plan.children.get(nodeId) ?? []).flatMap((c) => this.buildNode(c, env, terminals, rt));
  }

  private buildNode(node: NodeSpec, env: ChainEnvLike, terminals: ChainTerminal[], rt: StageRuntime): ChainNode[] {
    switch (node.kind) {
      case 'map':
      case 'filter':
      case 'flatMap':
        return [new StatelessNode(node.kind, node.id, node.fn as (v: unknown) => unknown, env, this.buildChildren(node.id, env, terminals, rt))];
      case 'sink': {
        const writer = this.sinkWriter(node, env.subtask);
        const terminal = sinkTerminal(writer, env);
        terminals.push(terminal);
        return [terminal];
      }
      case 'keyBy':
        // One exchange per keyed operator reading this keyBy (two windows over the same keys, say).
        return (this.plan.children.get(node.id) ?? []).map((target) => {
          const exchange = this.keyedSender(target.id, env.subtask, rt);
          const terminal = new KeyByTerminal(node.id, node.selector, this.definition.maxParallelism, exchange, env);
          terminals.push(terminal);
          return terminal;
        });
      case 'broadcast': {
        const targets = (this.plan.children.get(node.id) ?? []).filter((c) => c.kind === 'broadcastProcess');
        return targets.map((t) => {
          const terminal = new BroadcastTerminal(this.broadcastSender(t.id, env.subtask, rt), env);
          terminals.push(terminal);
          return terminal;
        });
      }
      case 'sideOutput':
        throw new JobDefinitionError(`side output "${node.id}" must read from a keyed operator (process or window)`);
      default:
        // Keyed operators start their own stage; a forward edge into one does not exist.
        return [];
    }
  }

  private buildSource(rt: StageRuntime, index: number, env: ChainEnvLike, router?: SourceRouter): void {
    const root = rt.plan.root as Extract<NodeSpec, { kind: 'source' }>;
    const spec = root.spec;
    const p = rt.plan.parallelism;
    if (spec.kind === 'kafka') {
      const count = this.partitions.get(root.id)!;
      const mine = range(count).filter((partition) => partition % p === index);
      const out = new SourceOutput(root.id, rt.queues[index], spec, mine, env, router);
      const offsets = this.options.sourceOffsets?.[root.id];
      const start = offsets ? new Map(Object.entries(offsets).map(([k, v]) => [Number(k), v])) : restoredOffsets(restoredParts(this.options.restore, root.id), spec.topic);
      const readerId = `weir-${this.tenantId}-${this.jobId}-${root.id}-${index}`;
      rt.pumps[index] = new KafkaPump(this.options.kafka!, readerId, spec, mine, out, start, this.sourceBootstrap(rt, index));
    } else if (spec.kind === 'generator') {
      const out = new SourceOutput(root.id, rt.queues[index], spec, [0], env, router);
      const startIndex = restoredGeneratorIndex(restoredParts(this.options.restore, root.id), root.id, index, p);
      rt.pumps[index] = new GeneratorPump(spec, index, p, out, () => this.clock.now(), startIndex, this.sourceBootstrap(rt, index));
    } else {
      rt.memoryInputs[index] = new SourceOutput(root.id, rt.queues[index], spec, [0], env, router);
    }
  }

  /** A broadcast source reports catching up in-band, after its subtask passed those records on to the operator. */
  private sourceBootstrap(rt: StageRuntime, index: number): SourceBootstrap | undefined {
    const bootstrap = this.bootstrap;
    const id = rt.plan.id;
    if (!bootstrap) return undefined;
    return {
      hold: bootstrap.holdFor(id),
      caughtUp: bootstrap.isBroadcastSource(id) ? () => void inBand(rt.queues[index], async () => bootstrap.caughtUp(id)) : undefined,
    };
  }

  private keyedSender(targetStageId: string, subtask: number, from: StageRuntime): KeyedSender {
    const target = this.stages.get(targetStageId)!;
    if (!target.topic) return target.exchange!;
    const writerId = `weir-${this.tenantId}-${this.jobId}-${from.plan.id}-${subtask}-to-${targetStageId}`;
    const sender = new KafkaKeyedSender(this.options.kafka!, writerId, target.topic, this.definition.maxParallelism);
    this.closables.push(() => sender.close());
    return sender;
  }

  private broadcastSender(targetStageId: string, subtask: number, from: StageRuntime): BroadcastSender {
    const target = this.stages.get(targetStageId)!;
    if (!target.topic) return target.broadcast!;
    const writerId = `weir-${this.tenantId}-${this.jobId}-${from.plan.id}-${subtask}-bc-${targetStageId}`;
    const sender = new KafkaBroadcastSender(this.options.kafka!, writerId, target.topic, this.definition.maxParallelism);
    this.closables.push(() => sender.close());
    return sender;
  }

  private sinkWriter(node: Extract<NodeSpec, { kind: 'sink' }>, subtask: number): SinkWriter {
    if (node.spec.kind === 'kafka') {
      if (!this.options.kafka) throw new JobRunError(`sink "${node.id}" writes Kafka but no KafkaConnector was given`);
      if (this.options.delivery === 'exactly-once') {
        const identity = { tenantId: this.tenantId, jobId: this.jobId, sinkId: node.id, subtask };
        const eos = new ExactlyOnceKafkaSinkWriter(this.options.kafka, identity, node.spec, sinkCommitsTopic(this.tenantId, this.jobId));
        this.epochWriters.push(eos);
        this.closables.push(() => eos.close());
        return eos;
      }
      const writer = new KafkaSinkWriter(this.options.kafka, `weir-${this.tenantId}-${this.jobId}-${node.id}-${subtask}`, node.spec);
      this.closables.push(() => writer.close());
      return writer;
    }
    if (node.spec.kind === 'callback') return new CallbackSinkWriter(node.spec);
    let into = this.sinks.get(node.id);
    if (!into) this.sinks.set(node.id, (into = []));
    return new MemorySinkWriter(into);
  }

  private deadLetterQueue(stageId: string, subtask: number, metrics: SubtaskMetrics): DeadLetterQueue {
    const topic = this.options.deadLetterTopic;
    if (topic) {
      if (!this.options.kafka) throw new JobRunError(`deadLetterTopic "${topic}" needs a KafkaConnector`);
      const dlq = new KafkaDeadLetters(this.options.kafka, `weir-${this.tenantId}-${this.jobId}-${stageId}-${subtask}-dlq`, topic, metrics);
      this.closables.push(() => dlq.close());
      return dlq;
    }
    return new MemoryDeadLetters(this.memoryLetters, metrics);
  }

  metrics(): SubtaskMetricsSnapshot[] {
    const now = this.clock.now();
    const out: SubtaskMetricsSnapshot[] = [];
    for (const rt of this.stages.values()) {
      for (const i of rt.local) out.push(rt.metrics[i].snapshot(now, rt.subtasks[i].currentWatermark));
    }
    return out;
  }

  triggerCheckpoint(checkpointId: number): Promise<CheckpointSnapshot> {
    if (this.options.exchange === 'kafka') {
      return Promise.reject(new JobRunError('checkpoints over the Kafka exchange are not implemented yet'));
    }
    return this.checkpoints.trigger(checkpointId, [...this.stages.values()]).then(async (snapshot) => ({
      ...snapshot,
      sinkEpochs: await Promise.all(this.epochWriters.map((w) => w.sealedEpoch(checkpointId))),
    }));
  }

  pauseSourcesAfterNextBarrier(): void {
    for (const p of this.sourcePumps()) p.pauseAfterNextBarrier?.();
    for (const rt of this.stages.values()) for (const i of rt.local) rt.subtasks[i].holdTimersAfterNextBarrier();
  }

  resumeSources(): void {
    for (const p of this.sourcePumps()) p.resume?.();
    for (const rt of this.stages.values()) {
      for (const i of rt.local) {
        rt.subtasks[i].releaseTimers();
        // Wakes the subtask so timers that fell due while held fire now, not at its next message.
        rt.queues[i].offer({ kind: 'tick' });
      }
    }
  }

  private sourcePumps() {
    return [...this.stages.values()].filter((rt) => rt.plan.root.kind === 'source').flatMap((rt) => present(rt.pumps));
  }

  async completeCheckpoint(checkpointId: number): Promise<void> {
    await Promise.all(this.epochWriters.map((w) => w.commit(checkpointId)));
  }

  routingTable(operatorId: string): RoutingTable {
    const rt = this.keyedStage(operatorId);
    return rt.exchange?.table ?? rt.routing!;
  }

  moveKeyGroups(operatorId: string, moves: readonly KeyGroupMove[]): Promise<RoutingTable> {
    const rt = this.keyedStage(operatorId);
    return rt.exchange ? moveInMemory(rt, moves) : this.kafkaMoves.move(rt, moves);
  }

  snapshotKeyGroup(operatorId: string, keyGroup: number): Promise<Uint8Array> {
    const rt = this.keyedStage(operatorId);
    const owner = this.localOwner(rt, keyGroup);
    return inBand(rt.queues[owner], async () => {
      await rt.backends[owner].flush();
      return rt.backends[owner].snapshotKeyGroup(keyGroup);
    });
  }

  restoreKeyGroup(operatorId: string, keyGroup: number, image: Uint8Array): Promise<void> {
    const rt = this.keyedStage(operatorId);
    const owner = this.localOwner(rt, keyGroup);
    return inBand(rt.queues[owner], () => rt.operators[owner].adoptKeyGroup(keyGroup, image));
  }

  push(sourceId: string, records: readonly { value: unknown; timestamp?: number }[], subtask = 0): void {
    const input = this.memoryInput(sourceId, subtask);
    const now = this.clock.now();
    void input.emit(0, { values: records.map((r) => r.value), timestamps: records.map((r) => r.timestamp ?? now) });
  }

  pushWatermark(sourceId: string, watermark: number, subtask = 0): void {
    this.memoryInput(sourceId, subtask).watermark(watermark);
  }

  endSource(sourceId: string): void {
    const rt = this.stages.get(sourceId);
    if (!rt) throw new JobRunError(`no source "${sourceId}"`);
    for (const input of present(rt.memoryInputs)) input.end();
  }

  tick(): void {
    for (const rt of this.stages.values()) {
      for (const i of rt.local) rt.queues[i].offer({ kind: 'tick' });
      for (const input of present(rt.memoryInputs)) input.tick();
    }
  }

  quiet(): Promise<void> {
    return this.inFlight.quiet();
  }

  collected(sinkId: string): readonly CollectedRecord[] {
    return this.sinks.get(sinkId) ?? [];
  }

  deadLetters(): readonly DeadLetter[] {
    return this.memoryLetters;
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

  private closed = false;

  private async closeAll(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const close of this.closables) await close().catch(() => undefined);
    for (const rt of this.stages.values()) {
      for (const b of present(rt.backends)) await b.close().catch(() => undefined);
      for (const m of present(rt.metrics)) m.close();
    }
  }

  private localOwner(rt: StageRuntime, keyGroup: number): number {
    const owner = this.routingTable(rt.plan.id).ownerOf(keyGroup);
    if (!rt.operators[owner]) throw new JobRunError(`key group ${keyGroup} of "${rt.plan.id}" belongs to subtask ${owner}, not run here`);
    return owner;
  }

  private keyedStage(operatorId: string): StageRuntime {
    const rt = this.stages.get(operatorId);
    if (!rt || !rt.routing) throw new JobRunError(`no keyed operator "${operatorId}" in job ${this.jobId}`);
    return rt;
  }

  private memoryInput(sourceId: string, subtask: number): SourceOutput {
    const input = this.stages.get(sourceId)?.memoryInputs[subtask];
    if (!input) throw new JobRunError(`no memory source "${sourceId}" subtask ${subtask}`);
    return input;
  }


}

/** A keyBy that is the only reader of its source builds the keyed records at the source (KeyByTerminal.route). */
function fusedKeyBy(head: readonly ChainNode[]): SourceRouter | undefined {
  if (head.length !== 1 || !(head[0] instanceof KeyByTerminal)) return undefined;
  head[0].fuseWithSource();
  return head[0];
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

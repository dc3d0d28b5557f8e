/**
 * Builds one subtask of a stage: its chain of operators (stateless nodes, sinks, keyBy and broadcast terminals), its
 * root (a source, or a keyed operator with its state backend, restored), its input (memory queue, and for the Kafka
 * exchange a reader of its key-group partitions) and the Subtask loop that runs them.
 */
import { SubtaskMetrics } from '@weir/metrics';
import type { JobDefinition, NodeSpec } from '../sdk/graph';
import { JobDefinitionError } from '../sdk/stream';
import type { BroadcastBootstrap } from './broadcast-bootstrap';
import { BroadcastTerminal, type ChainNode, type ChainTerminal, KeyByTerminal, StatelessNode } from './chain';
import type { CheckpointCoordinator } from './checkpoint-coordinator';
import type { ConnectorRegistry } from './connectors/connector-registry';
import type { SourceRouter } from './connectors/source-output';
import { sinkTerminal } from './connectors/sink-terminals';
import type { SourceBootstrap } from './connectors/sources';
import type { BroadcastSender, KeyedSender } from './exchange/exchange';
import { KafkaExchangePump } from './exchange/kafka-exchange-reader';
import { KafkaBroadcastSender, KafkaKeyedSender } from './exchange/kafka-exchange-senders';
import { inBand } from './in-band';
import { jobClientId } from './topic-names';
import type { KeyedOperator, KeyedOperatorEnv } from './operators/keyed-operator';
import { broadcastProcessOperator, processOperator } from './operators/process-operator';
import { windowOperator } from './operators/window-operator';
import { type JobPlan, sourceRescalesLive } from './plan';
import type { ChainEnvLike, Clock } from './ports';
import { restoredExchangePositions, restoredGeneratorIndex, restoredOffsets, restoredParts, restoreKeyed } from './restore';
import type { RunJobOptions, SubtaskContext } from './running-job';
import type { StageRuntime } from './stage-runtime';
import { KeyedSubtask } from './keyed-subtask';
import { SourceSubtask } from './source-subtask';
import type { SubtaskSnapshot } from './subtask';
import { SubtaskOutputs } from './subtask-outputs';

export class JobAssembly {
  constructor(
    private readonly definition: JobDefinition,
    private readonly plan: JobPlan,
    private readonly options: RunJobOptions,
    private readonly clock: Clock,
    private readonly stages: ReadonlyMap<string, StageRuntime>,
    private readonly connectors: ConnectorRegistry,
    private readonly checkpoints: CheckpointCoordinator,
    /** Fresh starts: data sources wait for the broadcast inputs they meet. */
    private readonly bootstrap: BroadcastBootstrap | null,
  ) {}

  /** Kafka exchange: each source subtask's broadcast writers ("stage/subtask" → writers), drained when it catches up. */
  private readonly broadcastWriters = new Map<string, KafkaBroadcastSender[]>();

  async buildSubtask(rt: StageRuntime, index: number): Promise<void> {
    const stage = rt.plan;
    const root = stage.root;
    const { tenantId, jobId } = this.options;
    const metrics = new SubtaskMetrics({
      identity: { tenantId, jobId, operatorId: stage.id, subtask: index },
      maxParallelism: this.definition.maxParallelism,
      nowMs: this.clock.now(),
    });
    rt.metrics[index] = metrics;
    const deadLetters = this.connectors.deadLetters(stage.id, index, metrics);
    const env: ChainEnvLike = { tenantId, jobId, subtask: index, clock: this.clock, deadLetters, metrics };
    const terminals: ChainTerminal[] = [];
    const sideOutputs = new Map<string, ChainNode[]>();
    const mainChildren = (this.plan.children.get(root.id) ?? []).filter((c) => {
      if (c.kind !== 'sideOutput') return true;
      sideOutputs.set(c.tag, this.buildChildren(c.id, env, terminals, rt));
      return false;
    });
    const head = mainChildren.flatMap((c) => this.buildNode(c, env, terminals, rt));
    let operator: KeyedOperator | undefined;
    let exchangeReader: KafkaExchangePump | undefined;
    if (root.kind === 'source') {
      this.buildSource(rt, index, env, fusedKeyBy(head));
    } else {
      const ctx: SubtaskContext = { tenantId, jobId, operatorId: stage.id, subtask: index, parallelism: stage.parallelism };
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
        emitOutputs: () => rt.subtasks[index]!.emitOutputs(),
      };
      operator =
        root.kind === 'process'
          ? processOperator(opEnv, root.fn)
          : root.kind === 'broadcastProcess'
            ? broadcastProcessOperator(opEnv, root.fn)
            : windowOperator(opEnv, root.assigner, root.fn, root.options, undefined, root.phase);
      rt.operators[index] = operator;
      const restored = restoredParts(this.options.restore, stage.id);
      await restoreKeyed(restored, operator, backend, opEnv.ownedKeyGroups, index);
      if (rt.topic) {
        const positions = restoredExchangePositions(restored);
        exchangeReader = new KafkaExchangePump(this.options.kafka!, {
          readerId: jobClientId(tenantId, jobId, `${stage.id}-${index}-exchange`),
          topic: rt.topic,
          partitions: this.definition.maxParallelism,
          keyGroups: rt.routing!.keyGroupsOf(index).map((keyGroup) => ({ keyGroup, offset: positions.get(keyGroup) ?? 'earliest' })),
          queue: rt.queues[index],
          dataChannels: this.channelsOf(stage.dataInput!.stageId),
          broadcastChannels: stage.broadcastInput ? this.channelsOf(stage.broadcastInput.stageId) : 0,
          incarnation: this.options.incarnation ?? 0,
          joining: this.options.joining !== undefined,
        });
        rt.pumps[index] = exchangeReader;
      }
    }
    const reader = exchangeReader;
    const outputs = new SubtaskOutputs(env, terminals);
    const onSnapshot = (checkpointId: number, snapshot: SubtaskSnapshot) => this.checkpoints.onSnapshot(checkpointId, snapshot);
    rt.subtasks[index] = operator
      ? new KeyedSubtask({
          stageId: stage.id,
          env,
          queue: rt.queues[index],
          operator,
          head,
          outputs,
          dataChannels: this.channelsOf(stage.dataInput!.stageId),
          broadcastChannels: stage.broadcastInput ? this.channelsOf(stage.broadcastInput.stageId) : 0,
          onSnapshot,
          ...(reader ? { exchangePositions: () => reader.exchangePositions() } : {}),
          ...(this.options.subtaskRecordsPerSecond ? { recordsPerSecond: this.options.subtaskRecordsPerSecond } : {}),
        })
      : new SourceSubtask({ stageId: stage.id, env, queue: rt.queues[index], head, outputs, onSnapshot });
  }

  private channelsOf(stageId: string): number {
    return this.stages.get(stageId)!.plan.parallelism;
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
        const terminal = sinkTerminal(this.connectors.sink(node, env.subtask), env);
        terminals.push(terminal);
        return [terminal];
      }
      case 'keyBy':
        // One exchange per keyed operator reading this keyBy (two windows over the same keys, say).
        return (this.plan.children.get(node.id) ?? []).map((target) => {
          const terminal = new KeyByTerminal(node.id, node.selector, this.definition.maxParallelism, this.keyedSender(target.id, env.subtask, rt), env, this.stages.get(target.id)!);
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
    const stage = rt.plan;
    const restored = restoredParts(this.options.restore, stage.id);
    const spec = (stage.root as Extract<NodeSpec, { kind: 'source' }>).spec;
    const given = this.options.sourceOffsets?.[stage.id];
    const offsets =
      spec.kind !== 'kafka'
        ? undefined
        : given
          ? new Map(Object.entries(given).map(([k, v]) => [Number(k), v]))
          : restoredOffsets(restored, spec.topic);
    const generatorIndex = spec.kind === 'generator' ? restoredGeneratorIndex(restored, stage.id, index, stage.parallelism) : undefined;
    // Over the Kafka exchange a source that rescales live keeps its topic's other partitions on standby; joining a
    // running run, its subtasks here start with none (the run's leader moves some to them).
    const live = this.options.exchange === 'kafka' && sourceRescalesLive(this.plan, stage);
    const source = this.connectors.source(stage, index, rt.queues[index], env, router, {
      offsets,
      generatorIndex,
      bootstrap: this.sourceBootstrap(rt, index),
      ...(live ? { standby: true } : {}),
      ...(live && this.options.joining ? { partitions: [] } : {}),
    });
    if ('pump' in source) rt.pumps[index] = source.pump;
    else rt.memoryInputs[index] = source.memoryInput;
  }

  /**
   * A broadcast source reports catching up in-band, after its subtask passed those records on to the operator (over
   * the Kafka exchange: once the exchange acknowledged them, so data written after the release lies behind them).
   */
  private sourceBootstrap(rt: StageRuntime, index: number): SourceBootstrap | undefined {
    const bootstrap = this.bootstrap;
    const id = rt.plan.id;
    if (!bootstrap) return undefined;
    const caughtUp = async (): Promise<void> => {
      await Promise.all((this.broadcastWriters.get(`${id}/${index}`) ?? []).map((w) => w.drain()));
      bootstrap.caughtUp(id, index);
    };
    return {
      hold: bootstrap.holdFor(id),
      // A failed drain fails the subtask's next write too: the subtask reports it, and the data stays held.
      caughtUp: bootstrap.isBroadcastSource(id) ? () => void inBand(rt.queues[index], caughtUp).catch(() => undefined) : undefined,
    };
  }

  private keyedSender(targetStageId: string, subtask: number, from: StageRuntime): KeyedSender {
    const target = this.stages.get(targetStageId)!;
    if (!target.topic) return target.exchange!;
    const { tenantId, jobId } = this.options;
    const writerId = jobClientId(tenantId, jobId, `${from.plan.id}-${subtask}-to-${targetStageId}`);
    const sender = new KafkaKeyedSender(this.options.kafka!, writerId, target.topic, this.definition.maxParallelism, this.options.incarnation ?? 0, from.plan.parallelism);
    sender.carryPositions = target.plan.broadcastInput !== undefined;
    from.keyedSenders.push({ subtask, sender });
    this.connectors.own(() => sender.close());
    return sender;
  }

  private broadcastSender(targetStageId: string, subtask: number, from: StageRuntime): BroadcastSender {
    const target = this.stages.get(targetStageId)!;
    if (!target.topic) return target.broadcast!;
    const { tenantId, jobId } = this.options;
    const writerId = jobClientId(tenantId, jobId, `${from.plan.id}-${subtask}-bc-${targetStageId}`);
    const sender = new KafkaBroadcastSender(this.options.kafka!, writerId, target.topic, this.definition.maxParallelism, this.options.incarnation ?? 0);
    const key = `${from.plan.id}/${subtask}`;
    this.broadcastWriters.set(key, [...(this.broadcastWriters.get(key) ?? []), sender]);
    this.connectors.own(() => sender.close());
    return sender;
  }
}

/** A keyBy that is the only reader of its source builds the keyed records at the source (KeyByTerminal.route). */
function fusedKeyBy(head: readonly ChainNode[]): SourceRouter | undefined {
  if (head.length !== 1 || !(head[0] instanceof KeyByTerminal)) return undefined;
  head[0].fuseWithSource();
  return head[0];
}

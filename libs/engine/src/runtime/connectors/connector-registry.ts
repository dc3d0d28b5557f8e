/**
 * Every connector by kind, in one place: a new source or sink kind touches this file (and its own), nothing else.
 * The registry owns what it opens (writers, readers) and closes it with the job.
 */
import type { KafkaConnector } from '@weir/kafka';
import type { SubtaskMetrics } from '@weir/metrics';
import type { NodeSpec } from '../../sdk/graph';
import type { StagePlan } from '../plan';
import type { ChainEnvLike, DeadLetter, DeadLetterQueue } from '../ports';
import type { InputQueue } from '../queue';
import { JobRunError } from '../running-job';
import { KafkaDeadLetters, MemoryDeadLetters } from './dead-letters';
import { ExactlyOnceKafkaSinkWriter, sinkCommitsTopic } from './exactly-once-sink';
import { CallbackSinkWriter, type CollectedRecord, KafkaSinkWriter, MemorySinkWriter, type SinkWriter } from './sink-writers';
import { SourceOutput, type SourceRouter } from './source-output';
import { GeneratorPump, KafkaPump, type SourceBootstrap, type SourcePump } from './sources';
import { jobClientId } from '../topic-names';

export interface ConnectorSettings {
  readonly tenantId: string;
  readonly jobId: string;
  readonly kafka?: KafkaConnector;
  readonly delivery?: 'at-least-once' | 'exactly-once';
  readonly deadLetterTopic?: string;
}

/** How one source subtask starts: its restored position (or none) and its part in the broadcast bootstrap. */
export interface SourceStart {
  /** Kafka: partition → next offset. */
  readonly offsets?: ReadonlyMap<number, string>;
  /** Generator: the next index of this subtask. */
  readonly generatorIndex?: number;
  readonly bootstrap?: SourceBootstrap;
  /**
   * Kafka: the partitions this subtask reads (default: dealt round-robin over the source's subtasks, what a live
   * rescale leaves too) and whether the others stand by for a live rescale to move here.
   */
  readonly partitions?: readonly number[];
  readonly standby?: boolean;
}

/** A source subtask: a pump that reads on its own, or a memory input the test driver feeds. */
export type SourceSubtask = { readonly pump: SourcePump } | { readonly memoryInput: SourceOutput };

export class ConnectorRegistry {
  /** Exactly-once sink subtasks: sealed at barriers, committed by completeCheckpoint. */
  readonly epochWriters: ExactlyOnceKafkaSinkWriter[] = [];
  readonly memoryLetters: DeadLetter[] = [];
  private readonly sinks = new Map<string, CollectedRecord[]>();
  private readonly closables: (() => Promise<void>)[] = [];

  constructor(
    private readonly settings: ConnectorSettings,
    /** Source id → its Kafka topic's partition count (read before planning). */
    private readonly partitions: ReadonlyMap<string, number>,
  ) {}

  source(stage: StagePlan, index: number, queue: InputQueue, env: ChainEnvLike, router: SourceRouter | undefined, start: SourceStart): SourceSubtask {
    const root = stage.root as Extract<NodeSpec, { kind: 'source' }>;
    const spec = root.spec;
    const { tenantId, jobId } = this.settings;
    switch (spec.kind) {
      case 'kafka': {
        const all = Array.from({ length: this.partitions.get(root.id)! }, (_, p) => p);
        const mine = start.partitions ?? sourcePartitionsOf(all.length, stage.parallelism, index);
        const standby = start.standby ? all.filter((p) => !mine.includes(p)) : [];
        const out = new SourceOutput(root.id, queue, spec, mine, env, router);
        const readerId = jobClientId(tenantId, jobId, `${root.id}-${index}`);
        return { pump: new KafkaPump(this.kafka(`source "${root.id}"`), readerId, spec, mine, out, start.offsets, start.bootstrap, standby) };
      }
      case 'generator': {
        const out = new SourceOutput(root.id, queue, spec, [0], env, router);
        return { pump: new GeneratorPump(spec, index, stage.parallelism, out, () => env.clock.now(), start.generatorIndex, start.bootstrap) };
      }
      default:
        return { memoryInput: new SourceOutput(root.id, queue, spec, [0], env, router) };
    }
  }

  sink(node: Extract<NodeSpec, { kind: 'sink' }>, subtask: number): SinkWriter {
    const { tenantId, jobId } = this.settings;
    switch (node.spec.kind) {
      case 'kafka': {
        const kafka = this.kafka(`sink "${node.id}"`);
        if (this.settings.delivery === 'exactly-once') {
          const identity = { tenantId, jobId, sinkId: node.id, subtask };
          const eos = new ExactlyOnceKafkaSinkWriter(kafka, identity, node.spec, sinkCommitsTopic(tenantId, jobId));
          this.epochWriters.push(eos);
          this.closables.push(() => eos.close());
          return eos;
        }
        const writer = new KafkaSinkWriter(kafka, jobClientId(tenantId, jobId, `${node.id}-${subtask}`), node.spec);
        this.closables.push(() => writer.close());
        return writer;
      }
      case 'callback':
        return new CallbackSinkWriter(node.spec);
      default: {
        let into = this.sinks.get(node.id);
        if (!into) this.sinks.set(node.id, (into = []));
        return new MemorySinkWriter(into);
      }
    }
  }

  deadLetters(stageId: string, subtask: number, metrics: SubtaskMetrics): DeadLetterQueue {
    const topic = this.settings.deadLetterTopic;
    if (!topic) return new MemoryDeadLetters(this.memoryLetters, metrics);
    const { tenantId, jobId } = this.settings;
    const dlq = new KafkaDeadLetters(this.kafka(`deadLetterTopic "${topic}"`), jobClientId(tenantId, jobId, `${stageId}-${subtask}-dlq`), topic, metrics);
    this.closables.push(() => dlq.close());
    return dlq;
  }

  /** Something else the job opened and must close (exchange writers). */
  own(close: () => Promise<void>): void {
    this.closables.push(close);
  }

  collected(sinkId: string): readonly CollectedRecord[] {
    return this.sinks.get(sinkId) ?? [];
  }

  async closeAll(): Promise<void> {
    for (const close of this.closables) await close().catch(() => undefined);
  }

  private kafka(what: string): KafkaConnector {
    if (!this.settings.kafka) throw new JobRunError(`${what} uses Kafka but no KafkaConnector was given`);
    return this.settings.kafka;
  }
}

/** Partitions are dealt round-robin over a source's subtasks: subtask i of n reads every partition p with p % n = i. */
export function sourcePartitionsOf(partitions: number, subtasks: number, subtask: number): number[] {
  return Array.from({ length: partitions }, (_, p) => p).filter((p) => p % subtasks === subtask);
}

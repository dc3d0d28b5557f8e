import type { KeyedStateBackend } from '@weir/state';
import type { SubtaskMetrics } from '@weir/metrics';
import type { KeySplits, RoutingTable } from '../keygroups';
import type { SourceOutput } from './connectors/source-output';
import type { SourcePump } from './connectors/sources';
import type { KafkaKeyedSender } from './exchange/kafka-exchange-senders';
import type { MemoryBroadcastExchange, MemoryKeyedExchange } from './exchange/memory-exchange';
import type { KeyedStreamOperator } from './operators/operator-contract';
import type { StagePlan } from './plan';
import type { InputQueue } from './queue';
import type { Subtask } from './subtask';

/** One stage of a running job in this process: its queues (all subtasks) and the parts of its local subtasks. */
export interface StageRuntime {
  readonly plan: StagePlan;
  readonly queues: InputQueue[];
  readonly subtasks: Subtask[];
  readonly operators: KeyedStreamOperator[];
  readonly backends: KeyedStateBackend[];
  readonly metrics: SubtaskMetrics[];
  readonly pumps: SourcePump[];
  readonly memoryInputs: SourceOutput[];
  /** This process's senders of the stage's keyBy edges over the Kafka exchange (a live rescale updates their count). */
  readonly keyedSenders: { readonly subtask: number; readonly sender: KafkaKeyedSender }[];
  /** Subtask indexes this process runs. Arrays above are indexed by subtask and hold only these. */
  readonly local: readonly number[];
  routing?: RoutingTable;
  /**
   * A splittable window's hot keys split over several key groups (keygroups/key-splits.ts), read by this process's
   * keyBy terminals into the stage; KeySplits.NONE for every other stage.
   */
  splits: KeySplits;
  /** A source's subtasks across the run now (planned, then as a live rescale changed it). */
  sourceParallelism?: number;
  exchange?: MemoryKeyedExchange;
  broadcast?: MemoryBroadcastExchange;
  topic?: string;
}

export function present<T>(items: readonly (T | undefined)[]): T[] {
  return items.filter((x): x is T => x !== undefined);
}

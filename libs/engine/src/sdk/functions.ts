/**
 * What job authors implement. Each contract has one required method; every other hook has a default. The runtime
 * calls these from a batch-oriented adapter (a batch of records in, outputs collected), which is the boundary that
 * lets user code move behind an isolate or a process later without changing this API.
 */
import type { KeyValue } from '../keygroups';
import type {
  AnyStateDescriptor,
  BroadcastState,
  ListState,
  ListStateDescriptor,
  MapState,
  MapStateDescriptor,
  ReadOnlyBroadcastState,
  ValueState,
  ValueStateDescriptor,
} from './state';

/** Names a side output. Ids are stable strings so a side output survives upgrades like an operator does. */
export class OutputTag<T> {
  /** Phantom field carrying the element type. */
  declare readonly __type?: T;
  constructor(readonly id: string) {}
}

export interface Collector<O> {
  /** Emits a result; its event timestamp defaults to the timestamp of the input (or timer) being processed. */
  collect(value: O, timestamp?: number): void;
}

export type TimeDomain = 'event' | 'processing';

export interface TimerService {
  readonly currentWatermark: number;
  readonly currentProcessingTime: number;
  /** Timers are per key and deduplicated: registering the same timestamp twice fires once. */
  registerEventTimeTimer(timestamp: number): void;
  registerProcessingTimeTimer(timestamp: number): void;
  deleteEventTimeTimer(timestamp: number): void;
  deleteProcessingTimeTimer(timestamp: number): void;
}

/** Identity of the subtask running the function (identity travels explicitly). */
export interface OperatorInfo {
  readonly tenantId: string;
  readonly jobId: string;
  readonly operatorId: string;
  readonly subtask: number;
  readonly parallelism: number;
}

export interface KeyedContext<K extends KeyValue> {
  readonly key: K;
  /** Event time of the record or timer being processed. */
  readonly timestamp: number;
  readonly timers: TimerService;
  readonly operator: OperatorInfo;
  state<T>(descriptor: ValueStateDescriptor<T>): ValueState<T>;
  mapState<V>(descriptor: MapStateDescriptor<V>): MapState<V>;
  listState<T>(descriptor: ListStateDescriptor<T>): ListState<T>;
  output<S>(tag: OutputTag<S>, value: S): void;
}

export interface KeyedProcessFunction<K extends KeyValue, I, O> {
  /** Every state the function touches; the runtime prefetches these for each key of a batch. */
  readonly states?: readonly AnyStateDescriptor[];
  processElement(value: I, ctx: KeyedContext<K>, out: Collector<O>): void;
  onTimer?(timestamp: number, domain: TimeDomain, ctx: KeyedContext<K>, out: Collector<O>): void;
}

export interface KeyedBroadcastContext<K extends KeyValue, B> extends KeyedContext<K> {
  readonly broadcastState: ReadOnlyBroadcastState<B>;
}

export interface BroadcastContext<B> {
  readonly timestamp: number;
  readonly operator: OperatorInfo;
  readonly broadcastState: BroadcastState<B>;
  /**
   * Where this subtask is in its data input as the broadcast element is applied: per Kafka source partition
   * (`topic:partition`), the offset after the last record of that partition that reached this subtask before the
   * element. Records of the partition that this subtask receives with a lower offset were processed before the
   * element, the others come after it. A partition is absent until a batch of it reached this subtask (since the
   * subtask started or restored). Known for Kafka sources in the same process (not across the Kafka exchange).
   */
  inputPosition(): Readonly<Record<string, string>>;
}

/**
 * The rules channel. A broadcast element is applied on every subtask before any data element that follows it in
 * that subtask's input; broadcast state is identical on every subtask and is part of each subtask's snapshot.
 */
export interface KeyedBroadcastProcessFunction<K extends KeyValue, I, R, B, O> {
  readonly states?: readonly AnyStateDescriptor[];
  processElement(value: I, ctx: KeyedBroadcastContext<K, B>, out: Collector<O>): void;
  processBroadcastElement(value: R, ctx: BroadcastContext<B>, out: Collector<O>): void;
  onTimer?(timestamp: number, domain: TimeDomain, ctx: KeyedBroadcastContext<K, B>, out: Collector<O>): void;
}

/**
 * What makes one keyed operator differ from another (keyed-operator.ts runs them all): how it handles an element and
 * a fired timer, and the optional parts it brings — state held in memory instead of the backend (windows), and state
 * outside keyed state (broadcast state). A logic is built with the operator's KeyedScope: everything it may use.
 */
import type { KeyedStateBackend, StateRef } from '@weir/state';
import type { KeyValue } from '../../keygroups';
import type { Collector, KeyedContext, OperatorInfo } from '../../sdk/functions';
import type { AnyStateDescriptor } from '../../sdk/state';
import type { ChainEnv } from '../chain';
import type { KeyedRecord, StreamRecord } from '../records';
import type { DueTimer, TimerStore } from '../timers';
import type { KeyedOutputs } from './keyed-outputs';

/** What a logic is given: the current record's context and outputs, timers, the backend. */
export interface KeyedScope {
  readonly env: ChainEnv & { readonly operatorId: string; readonly backend: KeyedStateBackend; readonly maxParallelism: number };
  /** The context user code sees (current key and timestamp, timers, state, side outputs), one object for all records. */
  readonly ctx: KeyedContext<KeyValue>;
  /** Collects into the main output at the current record's time. */
  readonly collector: Collector<unknown>;
  readonly outputs: KeyedOutputs;
  readonly timers: TimerStore;
  readonly info: OperatorInfo;
  /** Event time as the operator has it. */
  readonly watermark: number;
  /** Per source partition, the offset after the last record of it that reached this subtask. */
  readonly inputPositions: Map<string, string>;
  /** The state address of the current key in one namespace. */
  ref(namespace: string): StateRef;
  deadLetter(value: unknown, raw: Buffer | undefined, timestamp: number, err: unknown): void;
}

export interface KeyedLogicSpec {
  /** Keyed state the user function declared: prefetched for every key of a batch. */
  readonly states: readonly AnyStateDescriptor[];
  /** False when timers follow from the logic's own state (windows) or can never run user code: not stored. */
  readonly durableTimers: boolean;
}

export interface KeyedLogic {
  onElement(record: KeyedRecord): void;
  onTimer(timer: DueTimer): void;
  readonly held?: HeldState;
  readonly broadcast?: BroadcastPart;
}

/** State a logic keeps in memory (or per batch) rather than reading and writing the backend per record. */
export interface HeldState {
  /** Namespaces prefetched per key besides declared state and timers. */
  readonly namespaces: readonly string[];
  /** False when records never address keyed state or timers: then no key address is built per record. */
  readonly perRecordState: boolean;
  /** Reads back what a batch needs, instead of the per-key prefetch of every namespace. */
  prefetch?(records: readonly KeyedRecord[]): Promise<void>;
  /** Around the synchronous part of a data batch. */
  beginBatch?(): void;
  endBatch?(records: readonly KeyedRecord[]): void;
  /** A key group arrives (start, restore, adoption): load what it holds and re-arm its timers. */
  load(keyGroup: number): Promise<void>;
  /** Event time advanced (after due timers fired). */
  advance?(watermark: number): Promise<void>;
  /** Writes what is held into the backend: before anything reads the backend directly. */
  persist?(): void;
  /** Drops what is held of a key group that leaves (or is about to be replaced). */
  forget?(keyGroup: number): void;
}

/** Broadcast state: applied from the broadcast input, identical on every subtask, part of every snapshot. */
export interface BroadcastPart {
  process(records: readonly StreamRecord[]): void;
  snapshot(): unknown;
  restore(state: unknown): void;
}

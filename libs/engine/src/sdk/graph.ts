/** The job graph a JobDefinition carries: plain nodes referring to their input by id. */
import type { KeyValue } from '../keygroups';
import type { SinkSpec, SourceSpec } from './connectors';
import type { KeyedBroadcastProcessFunction, KeyedProcessFunction } from './functions';
import type { WindowAssigner, WindowFunctionSpec, WindowOptions } from './windows';

/* eslint-disable @typescript-eslint/no-explicit-any -- the graph is type-erased; the builder keeps it typed */
export type NodeSpec =
  | { readonly kind: 'source'; readonly id: string; readonly spec: SourceSpec<any> }
  | { readonly kind: 'map'; readonly id: string; readonly input: string; readonly fn: (value: any) => any }
  | { readonly kind: 'filter'; readonly id: string; readonly input: string; readonly fn: (value: any) => boolean }
  | { readonly kind: 'flatMap'; readonly id: string; readonly input: string; readonly fn: (value: any) => Iterable<any> }
  | { readonly kind: 'keyBy'; readonly id: string; readonly input: string; readonly selector: (value: any) => KeyValue }
  | {
      readonly kind: 'process';
      readonly id: string;
      readonly input: string;
      readonly fn: KeyedProcessFunction<any, any, any>;
    }
  | {
      readonly kind: 'broadcastProcess';
      readonly id: string;
      readonly input: string;
      readonly broadcastInput: string;
      readonly fn: KeyedBroadcastProcessFunction<any, any, any, any, any>;
    }
  | {
      readonly kind: 'window';
      readonly id: string;
      readonly input: string;
      readonly assigner: WindowAssigner;
      readonly fn: WindowFunctionSpec<any, any, any>;
      readonly options: WindowOptions<any>;
      /**
       * A splittable window's two operators (WindowOptions.splittable): `partials` reads the user's records (its
       * hot keys may be split over several key groups) and emits WindowPartial; `merge` merges them per key and
       * window — each element's own window, not the assigner's — and emits the user's results.
       */
      readonly phase?: 'partials' | 'merge';
    }
  | { readonly kind: 'broadcast'; readonly id: string; readonly input: string }
  | { readonly kind: 'sideOutput'; readonly id: string; readonly input: string; readonly tag: string }
  | { readonly kind: 'sink'; readonly id: string; readonly input: string; readonly spec: SinkSpec<any> };
/* eslint-enable @typescript-eslint/no-explicit-any */

export type KeyedOperatorNode = Extract<NodeSpec, { kind: 'process' | 'broadcastProcess' | 'window' }>;

export interface JobDefinition {
  readonly name: string;
  /** Number of key groups of every keyed operator; fixed for the life of the job's state. */
  readonly maxParallelism: number;
  readonly nodes: readonly NodeSpec[];
  /**
   * The JSON Schema of the rules the job takes, when it declares one (StreamBuilder.rulesSchema): the bundle's
   * manifest must declare the same, and the control plane validates every rule set against it.
   */
  readonly rulesSchema?: Readonly<Record<string, unknown>>;
}

/**
 * The ids that name a job's operators and their state, in graph order: what a bundle's manifest lists. A derived
 * node (a broadcast or a side output, `score#broadcast`) is part of the operator before its `#`.
 */
export function operatorIdsOf(job: JobDefinition): string[] {
  const ids: string[] = [];
  for (const node of job.nodes) if (!node.id.includes('#')) ids.push(node.id);
  return ids;
}

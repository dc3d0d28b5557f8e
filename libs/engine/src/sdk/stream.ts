import type { KeyValue } from '../keygroups';
import type { SinkSpec, SourceSpec } from './connectors';
import type { KeyedBroadcastProcessFunction, KeyedProcessFunction, OutputTag } from './functions';
import type { NodeSpec } from './graph';
import { mergedWindows, partialWindows, type WindowAssigner, type WindowFunctionSpec, type WindowOptions, type WindowPartial } from './windows';

export class JobDefinitionError extends Error {
  override readonly name = 'JobDefinitionError';
}

/**
 * What the control plane and the worker protocol accept as an operator id (1–64 of A-Z, a-z, 0-9, "_", "-"): a bundle
 * whose ids pass here deploys; a dot or a 65th character would be refused only at deploy. Ids derived from one
 * (a splittable window's `${id}-by-key`, `${id}-merge`) are checked alike.
 */
const ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Collects nodes while a job is being defined; checks ids as they come. */
export class GraphBuilder {
  readonly nodes: NodeSpec[] = [];
  rulesSchema: Readonly<Record<string, unknown>> | undefined;
  private readonly ids = new Set<string>();

  add(node: NodeSpec): string {
    if (node.kind !== 'sideOutput' && node.kind !== 'broadcast' && !ID.test(node.id)) {
      throw new JobDefinitionError(
        `operator id "${node.id}" must be 1-64 of A-Z, a-z, 0-9, "_" or "-", starting with a letter or digit (ids are stable names for state; a splittable window's derived ids add "-by-key" and "-merge")`,
      );
    }
    if (this.ids.has(node.id)) throw new JobDefinitionError(`operator id "${node.id}" is used twice`);
    this.ids.add(node.id);
    this.nodes.push(node);
    return node.id;
  }
}

export class DataStream<T> {
  constructor(
    protected readonly graph: GraphBuilder,
    readonly nodeId: string,
  ) {}

  map<O>(id: string, fn: (value: T) => O): DataStream<O> {
    return new DataStream<O>(this.graph, this.graph.add({ kind: 'map', id, input: this.nodeId, fn }));
  }

  filter(id: string, fn: (value: T) => boolean): DataStream<T> {
    return new DataStream<T>(this.graph, this.graph.add({ kind: 'filter', id, input: this.nodeId, fn }));
  }

  flatMap<O>(id: string, fn: (value: T) => Iterable<O>): DataStream<O> {
    return new DataStream<O>(this.graph, this.graph.add({ kind: 'flatMap', id, input: this.nodeId, fn }));
  }

  /** Partitions by key: key → key group (murmur3 of the serialised key) → subtask through the routing table. */
  keyBy<K extends KeyValue>(id: string, selector: (value: T) => K): KeyedStream<K, T> {
    return new KeyedStream<K, T>(this.graph, this.graph.add({ kind: 'keyBy', id, input: this.nodeId, selector }));
  }

  /** Every element reaches every subtask of the operator this stream is connected to. */
  broadcast(): BroadcastStream<T> {
    return new BroadcastStream<T>(this.graph, this.graph.add({ kind: 'broadcast', id: `${this.nodeId}#broadcast`, input: this.nodeId }));
  }

  sideOutput<S>(tag: OutputTag<S>): DataStream<S> {
    const id = `${this.nodeId}#${tag.id}`;
    return new DataStream<S>(this.graph, this.graph.add({ kind: 'sideOutput', id, input: this.nodeId, tag: tag.id }));
  }

  sink(id: string, spec: SinkSpec<T>): void {
    this.graph.add({ kind: 'sink', id, input: this.nodeId, spec });
  }
}

export class KeyedStream<K extends KeyValue, T> {
  constructor(
    private readonly graph: GraphBuilder,
    readonly nodeId: string,
  ) {}

  process<O>(id: string, fn: KeyedProcessFunction<K, T, O>): DataStream<O> {
    return new DataStream<O>(this.graph, this.graph.add({ kind: 'process', id, input: this.nodeId, fn }));
  }

  window<O>(id: string, assigner: WindowAssigner, fn: WindowFunctionSpec<K, T, O>, options: WindowOptions<T> = {}): DataStream<O> {
    if (assigner.kind === 'session' && !fn.merge) {
      throw new JobDefinitionError(`window "${id}": session windows merge, so the aggregate function needs merge()`);
    }
    if (options.splittable) return this.splittableWindow(id, assigner, fn, options);
    return new DataStream<O>(this.graph, this.graph.add({ kind: 'window', id, input: this.nodeId, assigner, fn, options }));
  }

  /**
   * Two operators (WindowOptions.splittable): partial windows where the records land, merged per key downstream. The
   * second's ids are derived with "-" (the control plane's operator ids have no dots): `${id}-by-key`, `${id}-merge`.
   */
  private splittableWindow<O>(id: string, assigner: WindowAssigner, fn: WindowFunctionSpec<K, T, O>, options: WindowOptions<T>): DataStream<O> {
    const refuse = (why: string) => new JobDefinitionError(`window "${id}" is splittable, so ${why}`);
    if (!fn.merge) throw refuse('its function needs merge() (how two partial accumulators combine): use aggregate() with merge, reduce() or processWindow()');
    if (assigner.kind === 'session') throw refuse('it cannot use session windows (a split key\'s sessions would differ per part): use tumbling or sliding windows, or drop splittable');
    if ((options.allowedLatenessMs ?? 0) > 0 || options.lateOutputTag) {
      throw refuse('it cannot have allowed lateness or a late output tag (each partial is merged once, when its window closes): set neither, or drop splittable');
    }
    const partials = this.graph.add({ kind: 'window', id, input: this.nodeId, assigner, fn: partialWindows(fn), options, phase: 'partials' });
    const byKey = this.graph.add({ kind: 'keyBy', id: `${id}-by-key`, input: partials, selector: (p: WindowPartial) => p.key });
    const merged = this.graph.add({ kind: 'window', id: `${id}-merge`, input: byKey, assigner, fn: mergedWindows(fn as WindowFunctionSpec<K, never, O>), options: {}, phase: 'merge' });
    return new DataStream<O>(this.graph, merged);
  }

  connect<R>(broadcast: BroadcastStream<R>): BroadcastConnectedStream<K, T, R> {
    return new BroadcastConnectedStream<K, T, R>(this.graph, this.nodeId, broadcast.nodeId);
  }
}

export class BroadcastStream<T> {
  declare readonly __type?: T;
  constructor(
    protected readonly graph: GraphBuilder,
    readonly nodeId: string,
  ) {}
}

export class BroadcastConnectedStream<K extends KeyValue, T, R> {
  constructor(
    private readonly graph: GraphBuilder,
    private readonly keyedNodeId: string,
    private readonly broadcastNodeId: string,
  ) {}

  process<B, O>(id: string, fn: KeyedBroadcastProcessFunction<K, T, R, B, O>): DataStream<O> {
    const node: NodeSpec = { kind: 'broadcastProcess', id, input: this.keyedNodeId, broadcastInput: this.broadcastNodeId, fn };
    return new DataStream<O>(this.graph, this.graph.add(node));
  }
}

export class StreamBuilder {
  constructor(private readonly graph: GraphBuilder) {}

  source<T>(id: string, spec: SourceSpec<T>): DataStream<T> {
    return new DataStream<T>(this.graph, this.graph.add({ kind: 'source', id, spec }));
  }

  /**
   * Declares the JSON Schema of the rules this job takes on its rules topic (a JSON object; for a parameterized
   * job it may depend on the deployment's properties). The control plane reads it from the bundle at upload: the
   * manifest's `rulesSchema` must be the same (as the job builds it with its properties' defaults).
   */
  rulesSchema(schema: Record<string, unknown>): void {
    if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) throw new JobDefinitionError('rulesSchema() takes a JSON Schema object');
    if (this.graph.rulesSchema !== undefined) throw new JobDefinitionError('rulesSchema() is declared twice');
    let copy: Record<string, unknown>;
    try {
      copy = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
    } catch (err) {
      throw new JobDefinitionError(`rulesSchema() takes a JSON Schema object, which must be JSON: ${(err as Error).message}`);
    }
    this.graph.rulesSchema = Object.freeze(copy);
  }
}

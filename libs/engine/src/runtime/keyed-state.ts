import type { KeyedStateBackend, StateRef } from '@weir/state';
import type { AnyStateDescriptor, ListState, MapState, ValueState } from '../sdk/state';

export class UndeclaredStateError extends Error {
  override readonly name = 'UndeclaredStateError';
}

/**
 * One declared state of the operator, bound to the current key. The views over it are built once per operator, so
 * `ctx.state(d)` allocates nothing per call; the state address is built at most once per record (and the backend
 * reuses its id for every access with that same address).
 */
class BoundState {
  private ref: StateRef | undefined;
  readonly value: ValueState<unknown>;
  readonly map: MapState<unknown>;
  readonly list: ListState<unknown>;

  constructor(
    private readonly access: KeyedStateAccess,
    private readonly backend: KeyedStateBackend,
    private readonly namespace: string,
    private readonly ttlMs: number | undefined,
    private readonly now: () => number,
  ) {
    this.value = {
      value: () => this.read(),
      update: (v) => this.put(v),
      clear: () => this.backend.delete(this.current()),
    };
    const readMap = () => this.read() as Record<string, unknown> | undefined;
    this.map = {
      get: (field) => readMap()?.[field],
      has: (field) => Object.prototype.hasOwnProperty.call(readMap() ?? {}, field),
      put: (field, value) => this.put({ ...readMap(), [field]: value }),
      remove: (field) => {
        const current = readMap();
        if (!current || !(field in current)) return;
        const next = { ...current };
        delete next[field];
        if (Object.keys(next).length === 0) this.backend.delete(this.current());
        else this.put(next);
      },
      entries: () => Object.entries(readMap() ?? {}),
      clear: () => this.backend.delete(this.current()),
    };
    const readList = () => (this.read() as unknown[] | undefined) ?? [];
    this.list = {
      get: () => readList(),
      add: (value) => this.put([...readList(), value]),
      update: (values) => (values.length === 0 ? this.backend.delete(this.current()) : this.put([...values])),
      clear: () => this.backend.delete(this.current()),
    };
  }

  /** The key moved on: the next access uses `ref` (prefetched for this key and namespace) or builds the address. */
  reset(ref: StateRef | undefined): void {
    this.ref = ref;
  }

  private current(): StateRef {
    return (this.ref ??= { keyGroup: this.access.keyGroup, namespace: this.namespace, key: this.access.keyBytes });
  }

  private read(): unknown {
    return this.backend.get(this.current(), this.now());
  }

  private put(value: unknown): void {
    const ttl = this.ttlMs;
    this.backend.put(this.current(), value, ttl === undefined ? undefined : { expiresAt: this.now() + ttl });
  }
}

/**
 * Synchronous keyed-state views over a backend whose entries for the current key were prefetched. One instance per
 * operator subtask; `setKey` moves it to the record being processed (no allocation per record).
 */
export class KeyedStateAccess {
  keyGroup = 0;
  keyBytes: Uint8Array = new Uint8Array();
  private readonly byName = new Map<string, { descriptor: AnyStateDescriptor; bound: BoundState }>();
  private readonly bound: BoundState[] = [];
  private lastDescriptor: AnyStateDescriptor | undefined;
  private lastKind: AnyStateDescriptor['kind'] | undefined;
  private lastBound: BoundState | undefined;

  constructor(
    backend: KeyedStateBackend,
    private readonly operatorId: string,
    descriptors: readonly AnyStateDescriptor[],
    now: () => number,
  ) {
    for (const d of descriptors) {
      const bound = new BoundState(this, backend, `${operatorId}/${d.name}`, d.ttl?.ttlMs, now);
      this.byName.set(d.name, { descriptor: d, bound });
      this.bound.push(bound);
    }
  }

  namespaces(): string[] {
    return [...this.byName.keys()].map((name) => `${this.operatorId}/${name}`);
  }

  /** `refs`: the key's prefetched addresses, declared states first in declaration order (see namespaces()). */
  setKey(keyGroup: number, keyBytes: Uint8Array, refs?: readonly StateRef[]): void {
    if (keyBytes === this.keyBytes && keyGroup === this.keyGroup) return;
    this.keyGroup = keyGroup;
    this.keyBytes = keyBytes;
    const bound = this.bound;
    for (let i = 0; i < bound.length; i++) bound[i].reset(refs?.[i]);
  }

  value<T>(descriptor: AnyStateDescriptor): ValueState<T> {
    return this.bind(descriptor, 'value').value as ValueState<T>;
  }

  map<V>(descriptor: AnyStateDescriptor): MapState<V> {
    return this.bind(descriptor, 'map').map as MapState<V>;
  }

  list<T>(descriptor: AnyStateDescriptor): ListState<T> {
    return this.bind(descriptor, 'list').list as ListState<T>;
  }

  private bind(descriptor: AnyStateDescriptor, kind: AnyStateDescriptor['kind']): BoundState {
    // Functions call ctx.state(d) with the same descriptor object for every record (often twice: read, update).
    if (descriptor === this.lastDescriptor && kind === this.lastKind) return this.lastBound!;
    const declared = this.byName.get(descriptor.name);
    if (!declared || declared.descriptor.kind !== kind) {
      throw new UndeclaredStateError(
        `operator "${this.operatorId}" uses ${kind} state "${descriptor.name}" that its function does not declare in \`states\``,
      );
    }
    this.lastDescriptor = descriptor;
    this.lastKind = kind;
    this.lastBound = declared.bound;
    return declared.bound;
  }
}

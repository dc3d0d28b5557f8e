import type { KeyedStateBackend, StateRef } from '@weir/state';
import type { AnyStateDescriptor, ListState, MapState, ValueState } from '../sdk/state';

export class UndeclaredStateError extends Error {
  override readonly name = 'UndeclaredStateError';
}

/**
 * Synchronous keyed-state views over a backend whose entries for the current key were prefetched. One instance per
 * operator subtask; `setKey` moves it to the record being processed (no allocation per record beyond the views).
 */
export class KeyedStateAccess {
  private keyGroup = 0;
  private keyBytes: Uint8Array = new Uint8Array();
  private readonly byName = new Map<string, AnyStateDescriptor>();

  constructor(
    private readonly backend: KeyedStateBackend,
    private readonly operatorId: string,
    descriptors: readonly AnyStateDescriptor[],
    private readonly now: () => number,
  ) {
    for (const d of descriptors) this.byName.set(d.name, d);
  }

  namespaces(): string[] {
    return [...this.byName.keys()].map((name) => `${this.operatorId}/${name}`);
  }

  setKey(keyGroup: number, keyBytes: Uint8Array): void {
    this.keyGroup = keyGroup;
    this.keyBytes = keyBytes;
  }

  value<T>(descriptor: AnyStateDescriptor): ValueState<T> {
    const { ref, put } = this.bind(descriptor, 'value');
    return {
      value: () => this.backend.get<T>(ref, this.now()),
      update: (v) => put(v),
      clear: () => this.backend.delete(ref),
    };
  }

  map<V>(descriptor: AnyStateDescriptor): MapState<V> {
    const { ref, put } = this.bind(descriptor, 'map');
    const read = () => this.backend.get<Record<string, V>>(ref, this.now());
    return {
      get: (field) => read()?.[field],
      has: (field) => Object.prototype.hasOwnProperty.call(read() ?? {}, field),
      put: (field, value) => put({ ...read(), [field]: value }),
      remove: (field) => {
        const current = read();
        if (!current || !(field in current)) return;
        const next = { ...current };
        delete next[field];
        if (Object.keys(next).length === 0) this.backend.delete(ref);
        else put(next);
      },
      entries: () => Object.entries(read() ?? {}),
      clear: () => this.backend.delete(ref),
    };
  }

  list<T>(descriptor: AnyStateDescriptor): ListState<T> {
    const { ref, put } = this.bind(descriptor, 'list');
    const read = () => this.backend.get<T[]>(ref, this.now()) ?? [];
    return {
      get: () => read(),
      add: (value) => put([...read(), value]),
      update: (values) => (values.length === 0 ? this.backend.delete(ref) : put([...values])),
      clear: () => this.backend.delete(ref),
    };
  }

  private bind(descriptor: AnyStateDescriptor, kind: AnyStateDescriptor['kind']) {
    const declared = this.byName.get(descriptor.name);
    if (!declared || declared.kind !== kind) {
      throw new UndeclaredStateError(
        `operator "${this.operatorId}" uses ${kind} state "${descriptor.name}" that its function does not declare in \`states\``,
      );
    }
    const ref: StateRef = { keyGroup: this.keyGroup, namespace: `${this.operatorId}/${descriptor.name}`, key: this.keyBytes };
    const ttl = declared.ttl?.ttlMs;
    const put = (value: unknown) =>
      this.backend.put(ref, value, ttl === undefined ? undefined : { expiresAt: this.now() + ttl });
    return { ref, put };
  }
}

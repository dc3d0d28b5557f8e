/**
 * Keyed state as job authors see it. Every accessor is synchronous: the runtime loads the state of every key in a
 * batch before user code runs and writes it back afterwards, so user code never awaits.
 * State is scoped to the current key; it lives in the key group of that key and moves with it.
 */

export interface StateTtl {
  /** Processing-time lifetime from the last write. */
  readonly ttlMs: number;
}

export interface StateDescriptor<K extends 'value' | 'map' | 'list', T> {
  readonly kind: K;
  /** Stable name: `${operatorId}/${name}` is the storage namespace, so renaming it drops the state. */
  readonly name: string;
  readonly ttl?: StateTtl;
  /** Phantom field carrying the value type. */
  readonly __type?: T;
}

export type ValueStateDescriptor<T> = StateDescriptor<'value', T>;
export type MapStateDescriptor<V> = StateDescriptor<'map', V>;
export type ListStateDescriptor<T> = StateDescriptor<'list', T>;
export type AnyStateDescriptor = StateDescriptor<'value' | 'map' | 'list', unknown>;

export function valueState<T>(name: string, ttl?: StateTtl): ValueStateDescriptor<T> {
  return { kind: 'value', name, ttl };
}
export function mapState<V>(name: string, ttl?: StateTtl): MapStateDescriptor<V> {
  return { kind: 'map', name, ttl };
}
export function listState<T>(name: string, ttl?: StateTtl): ListStateDescriptor<T> {
  return { kind: 'list', name, ttl };
}

export interface ValueState<T> {
  value(): T | undefined;
  update(value: T): void;
  clear(): void;
}

/** Stored as one entry per key (a small map per key); keep maps per key bounded. */
export interface MapState<V> {
  get(field: string): V | undefined;
  has(field: string): boolean;
  put(field: string, value: V): void;
  remove(field: string): void;
  entries(): [string, V][];
  clear(): void;
}

export interface ListState<T> {
  get(): readonly T[];
  add(value: T): void;
  update(values: readonly T[]): void;
  clear(): void;
}

/** Broadcast state: one map per subtask, the same contents everywhere (rules, configuration). */
export interface ReadOnlyBroadcastState<V> {
  get(key: string): V | undefined;
  entries(): [string, V][];
}
export interface BroadcastState<V> extends ReadOnlyBroadcastState<V> {
  put(key: string, value: V): void;
  remove(key: string): void;
}

import type { KeyValue } from '../../keygroups';
import type {
  BroadcastContext,
  KeyedBroadcastContext,
  KeyedBroadcastProcessFunction,
  KeyedProcessFunction,
} from '../../sdk/functions';
import type { BroadcastState } from '../../sdk/state';
import type { StreamRecord } from '../records';
import type { BroadcastPart, KeyedLogic, KeyedScope } from './keyed-logic';
import { KeyedOperator, type KeyedOperatorEnv } from './keyed-operator';

/** Runs a KeyedProcessFunction. */
export function processOperator(env: KeyedOperatorEnv, fn: KeyedProcessFunction<KeyValue, unknown, unknown>): KeyedOperator {
  // Without onTimer a timer could never run user code: nothing to keep (or prefetch) for timers.
  return new KeyedOperator(env, { states: fn.states ?? [], durableTimers: fn.onTimer !== undefined }, ({ ctx, collector }): KeyedLogic => ({
    onElement: (record) => fn.processElement(record.value, ctx, collector),
    onTimer: (timer) => fn.onTimer?.(timer.timestamp, timer.domain, ctx, collector),
  }));
}

/**
 * Runs a KeyedBroadcastProcessFunction. Broadcast state is a per-subtask map, identical on every subtask because
 * every subtask applies the same broadcast elements in the same order; it is part of the subtask's snapshot.
 */
export function broadcastProcessOperator(env: KeyedOperatorEnv, fn: KeyedBroadcastProcessFunction<KeyValue, unknown, unknown, unknown, unknown>): KeyedOperator {
  return new KeyedOperator(env, { states: fn.states ?? [], durableTimers: fn.onTimer !== undefined }, (scope): KeyedLogic => {
    const broadcast = new BroadcastStatePart(fn, scope);
    const { collector } = scope;
    const ctx = broadcast.keyedContext;
    return {
      onElement: (record) => fn.processElement(record.value, ctx, collector),
      onTimer: (timer) => fn.onTimer?.(timer.timestamp, timer.domain, ctx, collector),
      broadcast,
    };
  });
}

class BroadcastStatePart implements BroadcastPart {
  private readonly map = new Map<string, unknown>();
  private readonly state: BroadcastState<unknown>;
  /** What keyed user code sees: the keyed context with read-only broadcast state. */
  readonly keyedContext: KeyedBroadcastContext<KeyValue, unknown>;
  private readonly broadcastContext: BroadcastContext<unknown> & { timestamp: number };

  constructor(
    private readonly fn: KeyedBroadcastProcessFunction<KeyValue, unknown, unknown, unknown, unknown>,
    private readonly scope: KeyedScope,
  ) {
    const map = this.map;
    this.state = {
      get: (key) => map.get(key),
      entries: () => [...map.entries()],
      put: (key, value) => void map.set(key, value),
      remove: (key) => void map.delete(key),
    };
    const readOnly = { get: this.state.get, entries: this.state.entries };
    this.keyedContext = Object.create(scope.ctx, { broadcastState: { value: readOnly } });
    const positions = scope.inputPositions;
    this.broadcastContext = { timestamp: 0, operator: scope.info, broadcastState: this.state, inputPosition: () => Object.fromEntries(positions) };
  }

  /** Applies broadcast elements in arrival order; their outputs go with the operator's next drain. */
  process(records: readonly StreamRecord[]): void {
    for (const r of records) {
      this.broadcastContext.timestamp = r.timestamp;
      try {
        this.fn.processBroadcastElement(r.value, this.broadcastContext, {
          collect: (value, timestamp) => this.scope.outputs.emitRecord({ value, timestamp: timestamp ?? r.timestamp, ingestMs: r.ingestMs }),
        });
      } catch (err) {
        this.scope.deadLetter(r.value, r.raw, r.timestamp, err);
      }
    }
  }

  /** Input positions ride along: after a restore, inputPosition() goes on from the cut, not from nothing. */
  snapshot(): unknown {
    const broadcast = [...this.map.entries()];
    const positions = this.scope.inputPositions;
    return positions.size > 0 ? { broadcast, positions: [...positions.entries()] } : { broadcast };
  }

  restore(state: unknown): void {
    this.map.clear();
    const restored = state as { broadcast: [string, unknown][]; positions?: [string, string][] };
    for (const [k, v] of restored.broadcast) this.map.set(k, v);
    for (const [at, offset] of restored.positions ?? []) this.scope.inputPositions.set(at, offset);
  }
}

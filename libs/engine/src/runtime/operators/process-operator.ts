import type { KeyValue } from '../../keygroups';
import type {
  BroadcastContext,
  KeyedBroadcastContext,
  KeyedBroadcastProcessFunction,
  KeyedProcessFunction,
} from '../../sdk/functions';
import type { BroadcastState } from '../../sdk/state';
import type { KeyedRecord, StreamRecord } from '../records';
import type { DueTimer } from '../timers';
import { KeyedOperator, type KeyedOperatorEnv } from './keyed-operator';

/** Runs a KeyedProcessFunction. */
export class ProcessOperator extends KeyedOperator {
  constructor(
    env: KeyedOperatorEnv,
    private readonly fn: KeyedProcessFunction<KeyValue, unknown, unknown>,
  ) {
    // Without onTimer a timer could never run user code: nothing to keep (or prefetch) for timers.
    super(env, fn.states ?? [], fn.onTimer !== undefined);
  }

  protected onElement(record: KeyedRecord): void {
    this.fn.processElement(record.value, this.ctx, this.collector);
  }

  protected onTimerFired(timer: DueTimer): void {
    this.fn.onTimer?.(timer.timestamp, timer.domain, this.ctx, this.collector);
  }
}

/**
 * Runs a KeyedBroadcastProcessFunction. Broadcast state is a per-subtask map, identical on every subtask because
 * every subtask applies the same broadcast elements in the same order; it is part of the subtask's snapshot.
 */
export class BroadcastProcessOperator extends KeyedOperator {
  private readonly broadcastMap = new Map<string, unknown>();
  private readonly broadcastState: BroadcastState<unknown>;
  private readonly keyedCtx: KeyedBroadcastContext<KeyValue, unknown>;
  private readonly broadcastCtx: BroadcastContext<unknown> & { timestamp: number };

  constructor(
    env: KeyedOperatorEnv,
    private readonly fn: KeyedBroadcastProcessFunction<KeyValue, unknown, unknown, unknown, unknown>,
  ) {
    super(env, fn.states ?? [], fn.onTimer !== undefined);
    const map = this.broadcastMap;
    this.broadcastState = {
      get: (key) => map.get(key),
      entries: () => [...map.entries()],
      put: (key, value) => void map.set(key, value),
      remove: (key) => void map.delete(key),
    };
    const readOnly = { get: this.broadcastState.get, entries: this.broadcastState.entries };
    this.keyedCtx = Object.create(this.ctx, { broadcastState: { value: readOnly } });
    const positions = this.inputPositions;
    this.broadcastCtx = { timestamp: 0, operator: this.info, broadcastState: this.broadcastState, inputPosition: () => Object.fromEntries(positions) };
  }

  /** Applies broadcast elements in arrival order; outputs are emitted like any batch's. */
  processBroadcast(records: readonly StreamRecord[]): void {
    for (const r of records) {
      this.broadcastCtx.timestamp = r.timestamp;
      try {
        this.fn.processBroadcastElement(r.value, this.broadcastCtx, {
          collect: (value, timestamp) => this.emitOneAt(value, timestamp ?? r.timestamp, r.ingestMs),
        });
      } catch (err) {
        this.deadLetter(r.value, r.raw, r.timestamp, err);
      }
    }
    this.drain();
  }

  protected onElement(record: KeyedRecord): void {
    this.fn.processElement(record.value, this.keyedCtx, this.collector);
  }

  protected onTimerFired(timer: DueTimer): void {
    this.fn.onTimer?.(timer.timestamp, timer.domain, this.keyedCtx, this.collector);
  }

  /** Input positions ride along: after a restore, inputPosition() goes on from the cut, not from nothing. */
  override snapshotOperatorState(): unknown {
    const broadcast = [...this.broadcastMap.entries()];
    return this.inputPositions.size > 0 ? { broadcast, positions: [...this.inputPositions.entries()] } : { broadcast };
  }

  override restoreOperatorState(state: unknown): void {
    this.broadcastMap.clear();
    const restored = state as { broadcast: [string, unknown][]; positions?: [string, string][] };
    for (const [k, v] of restored.broadcast) this.broadcastMap.set(k, v);
    for (const [at, offset] of restored.positions ?? []) this.inputPositions.set(at, offset);
  }

  private emitOneAt(value: unknown, timestamp: number, ingestMs: number): void {
    this.emitRecord({ value, timestamp, ingestMs });
  }
}

import { CachedStateRef, type KeyedStateBackend, type StateRef } from '@weir/state';
import type { KeyedStreamOperator } from './operator-contract';
import { decodeKey, keyId, type KeyValue } from '../../keygroups';
import type { KeyedContext, OperatorInfo, OutputTag, TimeDomain, TimerService } from '../../sdk/functions';
import type { AnyStateDescriptor, ListState, MapState, ValueState } from '../../sdk/state';
import type { ChainEnv } from '../chain';
import { KeyedStateAccess } from '../keyed-state';
import { sendToDeadLetters } from '../ports';
import { type KeyedRecord, MIN_WATERMARK, type StreamRecord } from '../records';
import { TimerStore } from '../timers';
import type { HeldState, KeyedLogic, KeyedLogicSpec, KeyedScope } from './keyed-logic';
import { KeyedOutputs } from './keyed-outputs';
import { JobRunError } from '../running-job';

const FLUSH_INTERVAL_MS = 200;
/** Marks "no serialised key bound" (setCurrentKeyOnly): an address built from it would be a bug, and visibly empty. */
const NO_KEY_BYTES = new Uint8Array(0);

export interface KeyedOperatorEnv extends ChainEnv {
  readonly operatorId: string;
  readonly parallelism: number;
  /** The job's number of key groups: every record's key group is below it. */
  readonly maxParallelism: number;
  readonly backend: KeyedStateBackend;
  /** Key groups this subtask owns now (the runtime keeps it current across moves). */
  readonly ownedKeyGroups: Set<number>;
  /** Receives the main output of each batch, once per batch. */
  readonly emit: (records: readonly StreamRecord[]) => void;
  /** Receives side outputs by tag id. */
  readonly emitSide: (tagId: string, records: readonly StreamRecord[]) => void;
  /** Waits until the terminals downstream took everything emitted so far (the subtask's emit). */
  readonly emitOutputs: () => Promise<void>;
}

/**
 * Results handed downstream at a time while many timers or windows fire at once (a window end closing 100k keys):
 * each chunk reaches the sink before the next is built, so results die young instead of surviving into the old
 * generation together — that made a firing cost several times the records' own work.
 */
export const FIRING_CHUNK = 1_024;

/**
 * The keyed operator: the batch loop every keyed operator shares — prefetch the state of every key in the batch (one
 * awaited call), run user code synchronously per record, flush state (one awaited call), then emit the batch's
 * outputs — with timers, snapshots and key-group hand-overs, built from parts: state access (keyed-state.ts), timers
 * (timers.ts), outputs (keyed-outputs.ts) and the logic that makes it a process, broadcast-process or window operator
 * (keyed-logic.ts). User code that throws on a record sends that record to the dead-letter queue; the batch goes on.
 */
export class KeyedOperator implements KeyedStreamOperator {
  private readonly state: KeyedStateAccess;
  private readonly timers: TimerStore;
  private readonly outputs: KeyedOutputs;
  private readonly logic: KeyedLogic;
  private readonly held: HeldState | undefined;
  private watermark = MIN_WATERMARK;
  /** Per source partition, the offset after the last record of it that reached this subtask (per batch). */
  private readonly inputPositions = new Map<string, string>();
  /** Shared with the contexts user code sees; `parallelism` changes with a live rescale (resize). */
  private readonly info: { -readonly [K in keyof OperatorInfo]: OperatorInfo[K] };
  /** The current record: its key (and serialised key and key group), event time and ingestion time. */
  private readonly current: { key: KeyValue | undefined; keyBytes: Uint8Array; keyGroup: number; timestamp: number; ingestMs: number } = {
    key: undefined,
    keyBytes: NO_KEY_BYTES,
    keyGroup: 0,
    timestamp: 0,
    ingestMs: 0,
  };
  private lastFlush = performance.now();
  private namespaceCache: string[] | undefined;
  /**
   * The current data batch's state addresses per key, one per prefetched namespace (in prefetchNamespaces order).
   * A key's records share them: its serialised key and its cache ids are built once per batch, not per record.
   */
  private readonly batchRefs = new Map<KeyValue, CachedStateRef[]>();

  constructor(
    private readonly env: KeyedOperatorEnv,
    private readonly spec: KeyedLogicSpec,
    makeLogic: (scope: KeyedScope) => KeyedLogic,
  ) {
    const now = () => env.clock.now();
    this.state = new KeyedStateAccess(env.backend, env.operatorId, spec.states, now);
    this.timers = new TimerStore(env.backend, env.operatorId, (kg) => env.ownedKeyGroups.has(kg), spec.durableTimers);
    this.info = { tenantId: env.tenantId, jobId: env.jobId, operatorId: env.operatorId, subtask: env.subtask, parallelism: env.parallelism };
    this.outputs = new KeyedOutputs(this.current, env);
    this.logic = makeLogic(this.scope());
    this.held = this.logic.held;
  }

  async open(): Promise<void> {
    // A fresh job's backend holds nothing: no key group has timers or windows to load.
    if (await this.env.backend.isEmpty?.()) return;
    for (const kg of this.env.ownedKeyGroups) await this.load(kg);
  }

  async processBatch(records: readonly KeyedRecord[], positions?: Readonly<Record<string, string>>): Promise<void> {
    const held = this.held;
    if (held?.prefetch) await held.prefetch(records);
    else await this.prefetchBatch(records);
    held?.beginBatch?.();
    const bindState = held?.perRecordState ?? true;
    const byKey = this.batchRefs;
    const logic = this.logic;
    for (const r of records) {
      if (bindState) {
        const refs = byKey.get(r.key);
        if (refs === undefined) this.setCurrent(r.key, r.keyGroup, r.keyBytes, r.timestamp, r.ingestMs);
        else this.setCurrent(r.key, r.keyGroup, refs[0].key, r.timestamp, r.ingestMs, refs);
      } else {
        this.setCurrentKeyOnly(r.key, r.keyGroup, r.timestamp, r.ingestMs);
      }
      try {
        logic.onElement(r);
      } catch (err) {
        this.deadLetter(r.value, r.raw, r.timestamp, err);
      }
    }
    held?.endBatch?.(records);
    byKey.clear();
    if (positions) {
      // Batches of one source partition may arrive out of order across key-group partitions: keep the furthest.
      for (const at in positions) {
        const known = this.inputPositions.get(at);
        if (known === undefined || offsetBefore(known, positions[at])) this.inputPositions.set(at, positions[at]);
      }
    }
    await this.maybeFlush();
    this.outputs.drain();
  }

  processBroadcast(records: readonly StreamRecord[]): void {
    const broadcast = this.logic.broadcast;
    if (!broadcast) throw new Error(`operator "${this.env.operatorId}" has no broadcast input`);
    broadcast.process(records);
    this.outputs.drain();
  }

  async advanceWatermark(watermark: number): Promise<void> {
    if (watermark <= this.watermark) return;
    this.watermark = watermark;
    await this.fire('event', watermark);
    if (!this.held?.advance) return;
    await this.held.advance(watermark);
    this.outputs.drain();
  }

  async advanceProcessingTime(now: number): Promise<void> {
    await this.fire('processing', now);
  }

  nextProcessingTimer(): number | undefined {
    return this.timers.nextTimestamp('processing');
  }

  get currentWatermark(): number {
    return this.watermark;
  }

  /**
   * Writes state the operator holds outside the backend (in-memory windows) into it. The runtime calls it before
   * anything reads the backend directly: in-band control (snapshots, moves, restores) and checkpoint barriers.
   */
  async persistState(): Promise<void> {
    this.held?.persist?.();
  }

  /** Hand-over out: flushed image of one key group's state (timers included); the key group leaves this subtask. */
  async releaseKeyGroup(keyGroup: number): Promise<Uint8Array> {
    // Releasing a key group held elsewhere would hand over an empty image: its new owner would start it from nothing.
    if (!this.env.ownedKeyGroups.has(keyGroup)) {
      throw new JobRunError(`subtask ${this.env.subtask} of "${this.env.operatorId}" does not own key group ${keyGroup}: it cannot hand it over`);
    }
    await this.persistState();
    await this.env.backend.flush();
    const image = await this.env.backend.snapshotKeyGroup(keyGroup);
    await this.env.backend.dropKeyGroup(keyGroup);
    this.held?.forget?.(keyGroup);
    this.env.ownedKeyGroups.delete(keyGroup);
    this.timers.unload(keyGroup);
    return image;
  }

  /** Hand-over in: restores one key group's image and re-arms its timers. */
  async adoptKeyGroup(keyGroup: number, image: Uint8Array): Promise<void> {
    this.held?.forget?.(keyGroup);
    await this.env.backend.restoreKeyGroup(keyGroup, image);
    this.env.ownedKeyGroups.add(keyGroup);
    await this.load(keyGroup);
  }

  /** Images of every key group this subtask owns, after flushing: its part of a checkpoint. */
  async snapshotOwnedKeyGroups(): Promise<Map<number, Uint8Array>> {
    await this.persistState();
    await this.env.backend.flush();
    const owned = [...this.env.ownedKeyGroups].sort((a, b) => a - b);
    // A backend with a changelog hands over changes images for most key groups (incremental checkpoints).
    if (this.env.backend.checkpointKeyGroups) return this.env.backend.checkpointKeyGroups(owned);
    const images = new Map<number, Uint8Array>();
    for (const kg of owned) {
      images.set(kg, await this.env.backend.snapshotKeyGroup(kg));
    }
    return images;
  }

  resize(parallelism: number): void {
    this.info.parallelism = parallelism;
  }

  /** Operator state outside keyed state (broadcast state), for snapshots. */
  snapshotOperatorState(): unknown {
    return this.logic.broadcast ? this.logic.broadcast.snapshot() : null;
  }

  restoreOperatorState(state: unknown): void {
    this.logic.broadcast?.restore(state);
  }

  /** A key group arrived (start, restore, adoption): what its logic holds of it, else its stored timers. */
  private load(keyGroup: number): Promise<void> {
    return this.held ? this.held.load(keyGroup) : this.timers.load(keyGroup, this.env.clock.now());
  }

  /** Loads what the batch's records need before user code runs (one awaited call). */
  private async prefetchBatch(records: readonly KeyedRecord[]): Promise<void> {
    const namespaces = this.prefetchNamespaces;
    const byKey = this.batchRefs;
    byKey.clear();
    if (namespaces.length === 0) return;
    const refs: StateRef[] = [];
    for (const r of records) {
      if (byKey.has(r.key)) continue;
      const keyBytes = r.keyBytes;
      const own: CachedStateRef[] = new Array(namespaces.length);
      for (let i = 0; i < namespaces.length; i++) refs.push((own[i] = new CachedStateRef(r.keyGroup, namespaces[i], keyBytes)));
      byKey.set(r.key, own);
    }
    await this.env.backend.prefetch(refs);
  }

  /**
   * Dirty state is written to the store at most every FLUSH_INTERVAL_MS (and always before a snapshot, which
   * flushes itself): the write-back cache never evicts dirty entries, so nothing is lost, and one write batch then
   * carries many input batches' changes. Durability comes from checkpoints, not from these flushes.
   */
  private async maybeFlush(): Promise<void> {
    const now = performance.now();
    if (now - this.lastFlush < FLUSH_INTERVAL_MS) return;
    this.lastFlush = now;
    await this.env.backend.flush();
  }

  private async fire(domain: TimeDomain, upTo: number): Promise<void> {
    for (;;) {
      const due = this.timers.takeDue(domain, upTo);
      if (due.length === 0) return;
      await this.prefetchTimers(due);
      const now = this.env.clock.now();
      let fired = 0;
      for (const t of due) {
        if (++fired % FIRING_CHUNK === 0) await this.outputs.handOver();
        const key = decodeKey(t.keyBytes);
        this.setCurrent(key, t.keyGroup, t.keyBytes, t.timestamp, now);
        this.timers.fired(t, now);
        try {
          this.logic.onTimer(t);
        } catch (err) {
          this.deadLetter({ timer: t.timestamp, domain: t.domain, key }, undefined, t.timestamp, err);
        }
      }
      await this.maybeFlush();
      this.outputs.drain();
    }
  }

  private async prefetchTimers(items: readonly { keyGroup: number; keyBytes: Uint8Array; key?: KeyValue }[]): Promise<void> {
    const namespaces = this.prefetchNamespaces;
    if (namespaces.length === 0) return;
    // A Map tells the string '1' from the number 1, so the key itself dedupes without building a string.
    const seen = new Set<unknown>();
    const refs: StateRef[] = [];
    for (const item of items) {
      const id = item.key ?? keyId(item.keyBytes);
      if (seen.has(id)) continue;
      seen.add(id);
      for (const namespace of namespaces) refs.push({ keyGroup: item.keyGroup, namespace, key: item.keyBytes });
    }
    await this.env.backend.prefetch(refs);
  }

  private get prefetchNamespaces(): string[] {
    this.namespaceCache ??= [...this.state.namespaces(), ...(this.spec.durableTimers ? [this.timers.namespace] : []), ...(this.held?.namespaces ?? [])];
    return this.namespaceCache;
  }

  /** `refs`: the key's prefetched addresses (batchRefs), for its declared states to use as they are. */
  private setCurrent(key: KeyValue, keyGroup: number, keyBytes: Uint8Array, timestamp: number, ingestMs: number, refs?: readonly StateRef[]): void {
    const c = this.current;
    c.key = key;
    c.keyBytes = keyBytes;
    c.keyGroup = keyGroup;
    c.timestamp = timestamp;
    c.ingestMs = ingestMs;
    this.state.setKey(keyGroup, keyBytes, refs);
    this.timers.setKey(keyGroup, keyBytes);
  }

  /** The current key without its state and timer addresses (HeldState.perRecordState false). */
  private setCurrentKeyOnly(key: KeyValue, keyGroup: number, timestamp: number, ingestMs: number): void {
    const c = this.current;
    c.key = key;
    c.keyBytes = NO_KEY_BYTES;
    c.keyGroup = keyGroup;
    c.timestamp = timestamp;
    c.ingestMs = ingestMs;
  }

  private deadLetter(value: unknown, raw: Buffer | undefined, timestamp: number, err: unknown): void {
    sendToDeadLetters(this.env, { operatorId: this.env.operatorId, reason: 'user-function', error: err }, value, raw, timestamp);
  }

  /** What the logic is given (KeyedScope): one object, its getters reading the operator's current values. */
  private scope(): KeyedScope {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- one scope and one context for every record
    const self = this;
    const { env, current, outputs, timers } = this;
    const clock = env.clock;
    const timerService: TimerService = {
      get currentWatermark() {
        return self.watermark;
      },
      get currentProcessingTime() {
        return clock.now();
      },
      registerEventTimeTimer: (ts) => timers.register('event', ts, clock.now()),
      registerProcessingTimeTimer: (ts) => timers.register('processing', ts, clock.now()),
      deleteEventTimeTimer: (ts) => timers.delete('event', ts, clock.now()),
      deleteProcessingTimeTimer: (ts) => timers.delete('processing', ts, clock.now()),
    };
    const state = this.state;
    const ctx: KeyedContext<KeyValue> = {
      get key() {
        return current.key as KeyValue;
      },
      get timestamp() {
        return current.timestamp;
      },
      timers: timerService,
      operator: this.info,
      state: <T>(d: AnyStateDescriptor) => state.value<T>(d) as ValueState<T>,
      mapState: <V>(d: AnyStateDescriptor) => state.map<V>(d) as MapState<V>,
      listState: <T>(d: AnyStateDescriptor) => state.list<T>(d) as ListState<T>,
      output: <S>(tag: OutputTag<S>, value: S) => outputs.emitSide(tag.id, value),
    };
    return {
      env,
      ctx,
      collector: { collect: (value, timestamp) => outputs.emit(value, timestamp) },
      outputs,
      timers,
      info: this.info,
      get watermark() {
        return self.watermark;
      },
      inputPositions: this.inputPositions,
      ref: (namespace) => ({ keyGroup: current.keyGroup, namespace, key: current.keyBytes }),
      deadLetter: (value, raw, timestamp, err) => this.deadLetter(value, raw, timestamp, err),
    };
  }
}

/** Kafka offsets as decimal strings: a < b. */
export function offsetBefore(a: string, b: string): boolean {
  return a.length !== b.length ? a.length < b.length : a < b;
}

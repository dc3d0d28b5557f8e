import { CachedStateRef, type KeyedStateBackend, type StateRef } from '@weir/state';
import type { KeyedStreamOperator } from './operator-contract';
import { decodeKey, keyId, type KeyValue } from '../../keygroups';
import type { Collector, KeyedContext, OperatorInfo, OutputTag, TimeDomain, TimerService } from '../../sdk/functions';
import type { AnyStateDescriptor, ListState, MapState, ValueState } from '../../sdk/state';
import type { ChainEnv } from '../chain';
import { KeyedStateAccess } from '../keyed-state';
import { sendToDeadLetters } from '../ports';
import { type KeyedRecord, MIN_WATERMARK, type StreamRecord } from '../records';
import { type DueTimer, TimerStore } from '../timers';

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
  /** Waits until the terminals downstream took everything emitted so far (the subtask's flush). */
  readonly emitOutputs: () => Promise<void>;
}

/**
 * Results handed downstream at a time while many timers or windows fire at once (a window end closing 100k keys):
 * each chunk reaches the sink before the next is built, so results die young instead of surviving into the old
 * generation together — that made a firing cost several times the records' own work.
 */
export const FIRING_CHUNK = 1_024;

/**
 * The batch loop every keyed operator shares: prefetch the state of every key in the batch (one awaited call), run
 * user code synchronously per record, flush state (one awaited call), then emit the batch's outputs.
 * User code that throws on a record sends that record to the dead-letter queue; the batch goes on.
 */
export abstract class KeyedOperator implements KeyedStreamOperator {
  protected readonly state: KeyedStateAccess;
  protected readonly timers: TimerStore;
  protected watermark = MIN_WATERMARK;
  /** Per source partition, the offset after the last record of it that reached this subtask (per batch). */
  protected readonly inputPositions = new Map<string, string>();
  /** Shared with the contexts user code sees; `parallelism` changes with a live rescale (resize). */
  protected readonly info: { -readonly [K in keyof OperatorInfo]: OperatorInfo[K] };
  private out: StreamRecord[] = [];
  private readonly sides = new Map<string, StreamRecord[]>();
  private currentKey: KeyValue | undefined;
  private currentKeyBytes: Uint8Array = NO_KEY_BYTES;
  private currentKeyGroup = 0;
  private currentTimestamp = 0;
  private currentIngest = 0;
  private lastFlush = performance.now();
  private namespaceCache: string[] | undefined;
  /**
   * The current data batch's state addresses per key, one per prefetched namespace (in prefetchNamespaces order).
   * A key's records share them: its serialised key and its cache ids are built once per batch, not per record.
   */
  private readonly batchRefs = new Map<KeyValue, CachedStateRef[]>();
  protected readonly collector: Collector<unknown>;
  protected readonly ctx: KeyedContext<KeyValue>;

  constructor(
    protected readonly env: KeyedOperatorEnv,
    descriptors: readonly AnyStateDescriptor[],
    /** false when the operator derives its timers from its own state (windows) or can never run one. */
    private readonly timersDurable = true,
  ) {
    const now = () => env.clock.now();
    this.state = new KeyedStateAccess(env.backend, env.operatorId, descriptors, now);
    this.timers = new TimerStore(env.backend, env.operatorId, (kg) => env.ownedKeyGroups.has(kg), timersDurable);
    this.info = {
      tenantId: env.tenantId,
      jobId: env.jobId,
      operatorId: env.operatorId,
      subtask: env.subtask,
      parallelism: env.parallelism,
    };
    this.collector = { collect: (value, timestamp) => this.emitOne(value, timestamp) };
    this.ctx = this.makeContext();
  }

  /** Extra namespaces (besides declared state and timers) to prefetch per key, e.g. window contents. */
  protected extraNamespaces(): string[] {
    return [];
  }

  /** Re-arms the timers of one key group after it arrived (restore) or on start. */
  protected async loadTimers(keyGroup: number): Promise<void> {
    await this.timers.load(keyGroup, this.env.clock.now());
  }

  protected abstract onElement(record: KeyedRecord): void;
  protected abstract onTimerFired(timer: DueTimer): void;

  async open(): Promise<void> {
    // A fresh job's backend holds nothing: no key group has timers or windows to load.
    if (await this.env.backend.isEmpty?.()) return;
    for (const kg of this.env.ownedKeyGroups) await this.loadTimers(kg);
  }

  /** Called around the synchronous part of a data batch (operators that buffer per-key work per batch). */
  protected beginBatch(): void {}
  protected endBatch(_records: readonly KeyedRecord[]): void {}

  /** Loads what the batch's records need before user code runs (one awaited call). */
  protected async prefetchBatch(records: readonly KeyedRecord[]): Promise<void> {
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
   * Writes state the operator holds outside the backend (in-memory windows) into it. The runtime calls it before
   * anything reads the backend directly: in-band control (snapshots, moves, restores) and checkpoint barriers.
   */
  async persistState(): Promise<void> {}

  /** Drops what the operator holds in memory for a key group that leaves (or is about to be replaced). */
  protected forgetKeyGroup(_keyGroup: number): void {}

  /**
   * False when the operator never addresses state or timers of the current record's key (in-memory windows): then
   * a record's serialised key is not built just to be handed around.
   */
  protected usesKeyedStatePerRecord(): boolean {
    return true;
  }

  async processBatch(records: readonly KeyedRecord[], positions?: Readonly<Record<string, string>>): Promise<void> {
    await this.prefetchBatch(records);
    this.beginBatch();
    const bindState = this.usesKeyedStatePerRecord();
    const byKey = this.batchRefs;
    for (const r of records) {
      if (bindState) {
        const refs = byKey.get(r.key);
        if (refs === undefined) this.setCurrent(r.key, r.keyGroup, r.keyBytes, r.timestamp, r.ingestMs);
        else this.setCurrent(r.key, r.keyGroup, refs[0].key, r.timestamp, r.ingestMs, refs);
      } else {
        this.setCurrentKeyOnly(r.key, r.keyGroup, r.timestamp, r.ingestMs);
      }
      try {
        this.onElement(r);
      } catch (err) {
        this.deadLetter(r.value, r.raw, r.timestamp, err);
      }
    }
    this.endBatch(records);
    byKey.clear();
    if (positions) {
      // Batches of one source partition may arrive out of order across key-group partitions: keep the furthest.
      for (const at in positions) {
        const known = this.inputPositions.get(at);
        if (known === undefined || offsetBefore(known, positions[at])) this.inputPositions.set(at, positions[at]);
      }
    }
    await this.maybeFlush();
    this.drain();
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

  async advanceWatermark(watermark: number): Promise<void> {
    if (watermark <= this.watermark) return;
    this.watermark = watermark;
    await this.fire('event', watermark);
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

  /** Hand-over out: flushed image of one key group's state (timers included); the key group leaves this subtask. */
  async releaseKeyGroup(keyGroup: number): Promise<Uint8Array> {
    await this.persistState();
    await this.env.backend.flush();
    const image = await this.env.backend.snapshotKeyGroup(keyGroup);
    await this.env.backend.dropKeyGroup(keyGroup);
    this.forgetKeyGroup(keyGroup);
    this.env.ownedKeyGroups.delete(keyGroup);
    this.timers.unload(keyGroup);
    return image;
  }

  /** Hand-over in: restores one key group's image and re-arms its timers. */
  async adoptKeyGroup(keyGroup: number, image: Uint8Array): Promise<void> {
    this.forgetKeyGroup(keyGroup);
    await this.env.backend.restoreKeyGroup(keyGroup, image);
    this.env.ownedKeyGroups.add(keyGroup);
    await this.loadTimers(keyGroup);
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
    return null;
  }

  restoreOperatorState(_state: unknown): void {}

  private async fire(domain: TimeDomain, upTo: number): Promise<void> {
    for (;;) {
      const due = this.timers.takeDue(domain, upTo);
      if (due.length === 0) return;
      await this.prefetch(due);
      const now = this.env.clock.now();
      let fired = 0;
      for (const t of due) {
        if (++fired % FIRING_CHUNK === 0) await this.handOver();
        const key = decodeKey(t.keyBytes);
        this.setCurrent(key, t.keyGroup, t.keyBytes, t.timestamp, now);
        this.timers.fired(t, now);
        try {
          this.onTimerFired(t);
        } catch (err) {
          this.deadLetter({ timer: t.timestamp, domain: t.domain, key }, undefined, t.timestamp, err);
        }
      }
      await this.maybeFlush();
      this.drain();
    }
  }

  private async prefetch(items: readonly { keyGroup: number; keyBytes: Uint8Array; key?: KeyValue }[]): Promise<void> {
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
    this.namespaceCache ??= [...this.state.namespaces(), ...(this.timersDurable ? [this.timers.namespace] : []), ...this.extraNamespaces()];
    return this.namespaceCache;
  }

  /** `refs`: the key's prefetched addresses (batchRefs), for its declared states to use as they are. */
  protected setCurrent(key: KeyValue, keyGroup: number, keyBytes: Uint8Array, timestamp: number, ingestMs: number, refs?: readonly StateRef[]): void {
    this.currentKey = key;
    this.currentKeyBytes = keyBytes;
    this.currentKeyGroup = keyGroup;
    this.currentTimestamp = timestamp;
    this.currentIngest = ingestMs;
    this.state.setKey(keyGroup, keyBytes, refs);
    this.timers.setKey(keyGroup, keyBytes);
  }

  /** The current key without its state and timer addresses (see usesKeyedStatePerRecord). */
  private setCurrentKeyOnly(key: KeyValue, keyGroup: number, timestamp: number, ingestMs: number): void {
    this.currentKey = key;
    this.currentKeyBytes = NO_KEY_BYTES;
    this.currentKeyGroup = keyGroup;
    this.currentTimestamp = timestamp;
    this.currentIngest = ingestMs;
  }

  /** The state address of the current key in one namespace. */
  protected currentRef(namespace: string): StateRef {
    return { keyGroup: this.currentKeyGroup, namespace, key: this.currentKeyBytes };
  }

  protected emitOne(value: unknown, timestamp?: number): void {
    this.out.push({ value, timestamp: timestamp ?? this.currentTimestamp, ingestMs: this.currentIngest });
  }

  protected emitRecord(record: StreamRecord): void {
    this.out.push(record);
  }

  protected emitSide(tagId: string, value: unknown, timestamp?: number): void {
    let list = this.sides.get(tagId);
    if (!list) this.sides.set(tagId, (list = []));
    list.push({ value, timestamp: timestamp ?? this.currentTimestamp, ingestMs: this.currentIngest });
  }

  protected deadLetter(value: unknown, raw: Buffer | undefined, timestamp: number, err: unknown): void {
    sendToDeadLetters(this.env, { operatorId: this.env.operatorId, reason: 'user-function', error: err }, value, raw, timestamp);
  }

  /** Emits what is pending and waits until the terminals took it (see FIRING_CHUNK). */
  protected async handOver(): Promise<void> {
    this.drain();
    await this.env.emitOutputs();
  }

  protected drain(): void {
    if (this.out.length > 0) {
      const out = this.out;
      this.out = [];
      this.env.emit(out);
    }
    for (const [tag, list] of this.sides) {
      if (list.length === 0) continue;
      this.sides.set(tag, []);
      this.env.emitSide(tag, list);
    }
  }

  private makeContext(): KeyedContext<KeyValue> {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- one context object reused for every record
    const self = this;
    const clock = this.env.clock;
    const timers: TimerService = {
      get currentWatermark() {
        return self.watermark;
      },
      get currentProcessingTime() {
        return clock.now();
      },
      registerEventTimeTimer: (ts) => self.timers.register('event', ts, clock.now()),
      registerProcessingTimeTimer: (ts) => self.timers.register('processing', ts, clock.now()),
      deleteEventTimeTimer: (ts) => self.timers.delete('event', ts, clock.now()),
      deleteProcessingTimeTimer: (ts) => self.timers.delete('processing', ts, clock.now()),
    };
    return {
      get key() {
        return self.currentKey as KeyValue;
      },
      get timestamp() {
        return self.currentTimestamp;
      },
      timers,
      operator: this.info,
      state: <T>(d: AnyStateDescriptor) => self.state.value<T>(d) as ValueState<T>,
      mapState: <V>(d: AnyStateDescriptor) => self.state.map<V>(d) as MapState<V>,
      listState: <T>(d: AnyStateDescriptor) => self.state.list<T>(d) as ListState<T>,
      output: <S>(tag: OutputTag<S>, value: S) => self.emitSide(tag.id, value),
    };
  }
}

/** Kafka offsets as decimal strings: a < b. */
export function offsetBefore(a: string, b: string): boolean {
  return a.length !== b.length ? a.length < b.length : a < b;
}

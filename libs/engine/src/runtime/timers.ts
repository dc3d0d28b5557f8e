import type { KeyedStateBackend, StateRef } from '@weir/state';
import { keyId } from '../keygroups';
import type { TimeDomain } from '../sdk/functions';

/** Per key: the pending timer timestamps of each domain, sorted, without duplicates. */
interface KeyTimers {
  e: number[];
  p: number[];
}

export interface DueTimer {
  /** Index identity (domain, timestamp, key group, key), computed once. */
  readonly id: string;
  readonly timestamp: number;
  readonly domain: TimeDomain;
  readonly keyGroup: number;
  readonly keyBytes: Uint8Array;
}

/** A binary min-heap of timers by timestamp. */
class TimerHeap {
  private readonly items: DueTimer[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): DueTimer | undefined {
    return this.items[0];
  }

  push(t: DueTimer): void {
    const a = this.items;
    a.push(t);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent].timestamp <= t.timestamp) break;
      a[i] = a[parent];
      i = parent;
    }
    a[i] = t;
  }

  pop(): DueTimer | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        const mTs = () => (m === i ? last.timestamp : a[m].timestamp);
        if (l < a.length && a[l].timestamp < mTs()) m = l;
        if (r < a.length && a[r].timestamp < mTs()) m = r;
        if (m === i) break;
        a[i] = a[m];
        i = m;
      }
      a[i] = last;
    }
    return top;
  }
}

/**
 * Timers of one keyed operator subtask. The durable copy lives in keyed state (namespace `${operatorId}/__timers`,
 * one entry per key) so timers snapshot, move and restore with their key group; the heaps are an in-memory index
 * rebuilt from state when a key group arrives.
 */
export class TimerStore {
  readonly namespace: string;
  private readonly heaps = { event: new TimerHeap(), processing: new TimerHeap() };
  /** Live index entries; a heap entry not found here was deleted (lazy deletion). */
  private readonly live = new Set<string>();
  private keyGroup = 0;
  private keyBytes: Uint8Array = new Uint8Array();

  constructor(
    private readonly backend: KeyedStateBackend,
    operatorId: string,
    private readonly owns: (keyGroup: number) => boolean,
    /** false: the index is the only copy and the operator re-arms timers from its own state (windows do). */
    private readonly durable = true,
  ) {
    this.namespace = `${operatorId}/__timers`;
  }

  ref(keyGroup: number, keyBytes: Uint8Array): StateRef {
    return { keyGroup, namespace: this.namespace, key: keyBytes };
  }

  setKey(keyGroup: number, keyBytes: Uint8Array): void {
    this.keyGroup = keyGroup;
    this.keyBytes = keyBytes;
  }

  register(domain: TimeDomain, timestamp: number, now: number): void {
    const id = entryId(domain, timestamp, this.keyGroup, this.keyBytes);
    if (this.live.has(id)) return;
    if (this.durable) this.writeDurable(domain, timestamp, now);
    this.live.add(id);
    this.heaps[domain].push({ id, timestamp, domain, keyGroup: this.keyGroup, keyBytes: this.keyBytes });
  }

  /** Re-arms a timer of a given key without touching durable state (operators with derived timers). */
  arm(domain: TimeDomain, timestamp: number, keyGroup: number, keyBytes: Uint8Array): void {
    const id = entryId(domain, timestamp, keyGroup, keyBytes);
    if (this.live.has(id)) return;
    this.live.add(id);
    this.heaps[domain].push({ id, timestamp, domain, keyGroup, keyBytes });
  }

  private writeDurable(domain: TimeDomain, timestamp: number, now: number): void {
    const ref = this.ref(this.keyGroup, this.keyBytes);
    const stored = this.backend.get<KeyTimers>(ref, now) ?? { e: [], p: [] };
    const list = domain === 'event' ? stored.e : stored.p;
    if (!list.includes(timestamp)) {
      const next = [...list, timestamp].sort((a, b) => a - b);
      this.backend.put(ref, domain === 'event' ? { e: next, p: stored.p } : { e: stored.e, p: next });
    }
  }

  delete(domain: TimeDomain, timestamp: number, now: number): void {
    if (this.durable) this.removeDurable(domain, timestamp, this.keyGroup, this.keyBytes, now);
    this.live.delete(entryId(domain, timestamp, this.keyGroup, this.keyBytes));
  }

  nextTimestamp(domain: TimeDomain): number | undefined {
    this.dropDead(domain);
    return this.heaps[domain].peek()?.timestamp;
  }

  /**
   * Removes from the index every timer of `domain` due at or before `upTo`, in timestamp order. The caller must
   * prefetch their state and then call `fired` for each before running user code for it.
   */
  takeDue(domain: TimeDomain, upTo: number): DueTimer[] {
    const heap = this.heaps[domain];
    const due: DueTimer[] = [];
    for (;;) {
      this.dropDead(domain);
      const top = heap.peek();
      if (!top || top.timestamp > upTo) break;
      heap.pop();
      this.live.delete(top.id);
      due.push(top);
    }
    return due;
  }

  /** Removes a fired timer from durable state (its key's state must be prefetched). */
  fired(timer: DueTimer, now: number): void {
    if (this.durable) this.removeDurable(timer.domain, timer.timestamp, timer.keyGroup, timer.keyBytes, now);
  }

  /** Rebuilds the index for a key group from durable state (after a restore or on start). */
  async load(keyGroup: number, now: number): Promise<void> {
    if (!this.durable) return;
    for await (const [keyBytes, timers] of this.backend.entries<KeyTimers>(keyGroup, this.namespace, now)) {
      for (const [domain, list] of [['event', timers.e], ['processing', timers.p]] as const) {
        for (const timestamp of list) {
          const id = entryId(domain, timestamp, keyGroup, keyBytes);
          if (this.live.has(id)) continue;
          this.live.add(id);
          this.heaps[domain].push({ id, timestamp, domain, keyGroup, keyBytes });
        }
      }
    }
  }

  /** Forgets a key group's timers in the index (its durable copy leaves with its state). */
  unload(keyGroup: number): void {
    const group = String(keyGroup);
    for (const id of this.live) {
      const first = id.indexOf('|');
      if (id.slice(first + 1, id.indexOf('|', first + 1)) === group) this.live.delete(id);
    }
  }

  private removeDurable(domain: TimeDomain, timestamp: number, keyGroup: number, keyBytes: Uint8Array, now: number): void {
    const ref = this.ref(keyGroup, keyBytes);
    const stored = this.backend.get<KeyTimers>(ref, now);
    if (!stored) return;
    const e = domain === 'event' ? stored.e.filter((t) => t !== timestamp) : stored.e;
    const p = domain === 'processing' ? stored.p.filter((t) => t !== timestamp) : stored.p;
    if (e.length === 0 && p.length === 0) this.backend.delete(ref);
    else this.backend.put(ref, { e, p });
  }

  private dropDead(domain: TimeDomain): void {
    const heap = this.heaps[domain];
    for (;;) {
      const top = heap.peek();
      if (!top) return;
      if (this.live.has(top.id) && this.owns(top.keyGroup)) return;
      heap.pop();
    }
  }
}

function entryId(domain: TimeDomain, timestamp: number, keyGroup: number, keyBytes: Uint8Array): string {
  return (domain === 'event' ? 'e' : 'p') + timestamp + '|' + keyGroup + '|' + keyId(keyBytes);
}

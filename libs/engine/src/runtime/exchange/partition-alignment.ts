/**
 * Barrier alignment across the partitions one exchange reader reads. An upstream channel writes its barrier into every
 * key-group partition; for the receiving subtask the channel has passed the barrier only once every partition it reads
 * has delivered it (or ended). Until then, whatever a partition delivers after its barrier on that channel is held
 * here, so the subtask never sees a post-barrier record of a channel before that channel's barrier. The subtask then
 * aligns across channels itself (subtask.ts), as it does for in-memory input.
 *
 * `lane` names a channel of one lane: `d<channel>` for data, `b<channel>` for broadcast.
 */
export class PartitionAlignment<T extends { readonly partition: number; readonly offset: bigint }> {
  /** Per lane: the barrier being collected and the partitions that delivered it. */
  private readonly pending = new Map<string, { readonly checkpointId: number; readonly arrived: Set<number> }>();
  /** Per lane: what blocked partitions delivered after their barrier, in arrival order. */
  private readonly held = new Map<string, T[]>();
  /** Partition → lanes it is blocked on. */
  private readonly blocked = new Map<number, Set<string>>();

  /** Cheap guard for the per-record path: nothing is blocked while no barrier is pending. */
  get idle(): boolean {
    return this.pending.size === 0;
  }

  isBlocked(partition: number, lane: string): boolean {
    return this.blocked.get(partition)?.has(lane) ?? false;
  }

  hold(lane: string, item: T): void {
    let list = this.held.get(lane);
    if (!list) this.held.set(lane, (list = []));
    list.push(item);
  }

  /**
   * A barrier arrived from `partition` on `lane`. Returns the checkpoint id now collected for that lane, or null.
   * A barrier newer than the one collected (a partition adopted after it delivered the older one elsewhere) counts as
   * the older's arrival, and the caller must hold the newer barrier itself for replay (`true` in `holdThis`).
   */
  arrive(partition: number, lane: string, checkpointId: number): { holdThis: boolean } {
    const current = this.pending.get(lane);
    if (current && checkpointId < current.checkpointId) return { holdThis: false }; // stale: a superseded cut
    if (!current) this.pending.set(lane, { checkpointId, arrived: new Set([partition]) });
    else current.arrived.add(partition);
    let lanes = this.blocked.get(partition);
    if (!lanes) this.blocked.set(partition, (lanes = new Set()));
    lanes.add(lane);
    return { holdThis: current !== undefined && checkpointId > current.checkpointId };
  }

  /**
   * If every partition in `partitions` delivered the lane's pending barrier or has `ended` it, the barrier is complete:
   * returns its id and the held items to replay (in order; the caller replays them through its normal path, where
   * they may block again on the next barrier). Null while partitions are missing.
   */
  complete(lane: string, partitions: Iterable<number>, ended: (partition: number) => boolean): { checkpointId: number; replay: T[] } | null {
    const current = this.pending.get(lane);
    if (!current) return null;
    for (const p of partitions) if (!current.arrived.has(p) && !ended(p)) return null;
    this.pending.delete(lane);
    for (const [partition, lanes] of this.blocked) {
      lanes.delete(lane);
      if (lanes.size === 0) this.blocked.delete(partition);
    }
    const replay = this.held.get(lane) ?? [];
    this.held.delete(lane);
    return { checkpointId: current.checkpointId, replay };
  }

  /** The lanes with a barrier pending (to re-check completion when the set of partitions changes). */
  pendingLanes(): string[] {
    return [...this.pending.keys()];
  }

  /** A partition no longer read (released): it stops counting, and nothing of it stays held. */
  forget(partition: number): void {
    this.blocked.delete(partition);
    for (const pending of this.pending.values()) pending.arrived.delete(partition);
    for (const [lane, list] of this.held) this.held.set(lane, list.filter((item) => item.partition !== partition));
  }

  /** The lowest offset held of a partition: a release hands over from there (held items were never handed on). */
  firstHeldOffset(partition: number): bigint | undefined {
    let first: bigint | undefined;
    for (const list of this.held.values()) {
      for (const item of list) if (item.partition === partition && (first === undefined || item.offset < first)) first = item.offset;
    }
    return first;
  }
}

/**
 * A broadcast record (a rule change) applied at one cut of every key-group partition a subtask reads. The broadcast
 * sender writes it into every partition; read as it comes, it would apply at its first partition while records that
 * preceded it in the others are still unread, and those would then be judged by the new rules. So, as a barrier is,
 * it is aligned: a partition that delivered it waits (what follows is held here, in arrival order) until every
 * partition has, and only then does the subtask apply it. Used when the broadcast input has one channel (a rules
 * topic has one partition, one order for all); with several, each broadcast applies at its first sight.
 */
export class BroadcastAlignment<T extends { readonly partition: number }> {
  /** The broadcast being aligned, and per partition that delivered it, that record's offset. */
  private pending: { readonly seq: number; readonly arrived: Map<number, bigint> } | null = null;
  private held: T[] = [];

  get idle(): boolean {
    return this.pending === null;
  }

  isBlocked(partition: number): boolean {
    return this.pending?.arrived.has(partition) ?? false;
  }

  hold(item: T): void {
    this.held.push(item);
  }

  /**
   * Broadcast `seq` arrived from `partition`. Returns true when the caller must hold this very record: it is newer
   * than the one being aligned (a partition adopted after delivering the older one elsewhere), so it counts as that
   * one's arrival and is replayed after it.
   */
  arrive(partition: number, seq: number, offset: bigint): boolean {
    if (!this.pending) {
      this.pending = { seq, arrived: new Map([[partition, offset]]) };
      return false;
    }
    if (!this.pending.arrived.has(partition)) this.pending.arrived.set(partition, offset);
    return seq > this.pending.seq;
  }

  /**
   * Where the pending broadcast stands in `partition`, if that partition delivered it: a release hands the partition
   * over from there, so that the new owner, which has not applied it, meets it again.
   */
  arrivalOffset(partition: number): bigint | undefined {
    return this.pending?.arrived.get(partition);
  }

  /** Once every partition delivered the pending broadcast (or ended that lane): its seq and what waited behind it. */
  complete(partitions: Iterable<number>, ended: (partition: number) => boolean): { seq: number; held: T[] } | null {
    const pending = this.pending;
    if (!pending) return null;
    for (const p of partitions) if (!pending.arrived.has(p) && !ended(p)) return null;
    this.pending = null;
    const held = this.held;
    this.held = [];
    return { seq: pending.seq, held };
  }

  /** A partition no longer read (released): it stops counting and nothing of it stays held. */
  forget(partition: number): void {
    this.pending?.arrived.delete(partition);
    this.held = this.held.filter((item) => item.partition !== partition);
  }

  heldOf(partition: number): T[] {
    return this.held.filter((item) => item.partition === partition);
  }
}

/**
 * What a leader of a live move waits for: one acknowledgement per item (a key group, a source partition) of the move
 * it announced, or the first failure, or its timeout. One move at a time: the checkpoint leader orders them.
 */
export class AwaitedAcks<Ack> {
  private collecting: {
    readonly moveId: string;
    readonly waiting: Set<number>;
    readonly acks: Ack[];
    readonly resolve: () => void;
    readonly reject: (error: Error) => void;
  } | null = null;

  /** Publishes the move, then resolves with every item's acknowledgement (in their order of arrival). */
  async await(moveId: string, items: readonly number[], timeoutMs: number, publish: () => Promise<void>, timedOut: (left: number) => Error): Promise<Ack[]> {
    const acks: Ack[] = [];
    if (items.length === 0) return acks;
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        this.collecting = { moveId, waiting: new Set(items), acks, resolve, reject };
        timer = setTimeout(() => reject(timedOut(this.collecting?.waiting.size ?? 0)), timeoutMs);
        publish().catch(reject);
      });
    } finally {
      clearTimeout(timer);
      this.collecting = null;
    }
    return acks;
  }

  /** An item of the move under way is done; others' and repeated acknowledgements are ignored. */
  ack(moveId: string, item: number, ack: Ack): void {
    const c = this.collecting;
    if (!c || c.moveId !== moveId || !c.waiting.delete(item)) return;
    c.acks.push(ack);
    if (c.waiting.size === 0) c.resolve();
  }

  fail(moveId: string, error: Error): void {
    const c = this.collecting;
    if (c && c.moveId === moveId) c.reject(error);
  }
}

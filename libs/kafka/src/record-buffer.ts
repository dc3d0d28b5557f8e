import type { ConsumedRecord } from './contract';

/** One fetched batch of one partition; `end` is the offset after the batch (past markers and aborted records). */
interface Chunk {
  readonly key: string;
  readonly records: readonly ConsumedRecord[];
  readonly end: string;
  next: number;
}

export function partitionKey(topic: string, partition: number): string {
  return `${topic}:${partition}`;
}

/** The offset after `offset` (offsets are int64 strings). */
export function nextOffset(offset: string): string {
  return (BigInt(offset) + 1n).toString();
}

/**
 * Fetched records waiting for poll(), whole batches at a time so that neither side touches records one by one more
 * than once. It also keeps the positions a checkpoint stores: the offset after the last record poll() returned, or
 * the batch end once the batch is fully polled (so transaction markers never show as lag or get re-read).
 */
export class RecordBuffer {
  private chunks: Chunk[] = [];
  private head = 0;
  private buffered = 0;
  private readonly chunksPerKey = new Map<string, number>();
  private readonly positionByKey = new Map<string, string>();

  get size(): number {
    return this.buffered;
  }

  /** Drops every buffered record and starts over from these positions. */
  reset(positions: ReadonlyMap<string, string>): void {
    this.chunks = [];
    this.head = 0;
    this.buffered = 0;
    this.chunksPerKey.clear();
    this.positionByKey.clear();
    for (const [key, offset] of positions) this.positionByKey.set(key, offset);
  }

  has(key: string): boolean {
    return this.positionByKey.has(key);
  }

  positions(): ReadonlyMap<string, string> {
    return new Map(this.positionByKey);
  }

  position(key: string): string | undefined {
    return this.positionByKey.get(key);
  }

  /** Starts keeping a position for a partition not read before (it reads from `offset`). */
  track(key: string, offset: string): void {
    this.positionByKey.set(key, offset);
  }

  /** Drops a partition no longer read: its buffered records and its position. */
  forget(key: string): void {
    this.positionByKey.delete(key);
    if (!this.chunksPerKey.get(key)) return;
    const kept: Chunk[] = [];
    for (let i = this.head; i < this.chunks.length; i++) {
      const chunk = this.chunks[i];
      if (chunk.key === key) this.buffered -= chunk.records.length - chunk.next;
      else kept.push(chunk);
    }
    this.chunks = kept;
    this.head = 0;
    this.chunksPerKey.delete(key);
  }

  /** Appends a fetched batch. An empty batch (only markers or aborted records) still moves the position, in order. */
  push(key: string, records: readonly ConsumedRecord[], end: string): void {
    if (records.length === 0 && !this.chunksPerKey.get(key)) {
      this.positionByKey.set(key, end);
      return;
    }
    this.chunks.push({ key, records, end, next: 0 });
    this.chunksPerKey.set(key, (this.chunksPerKey.get(key) ?? 0) + 1);
    this.buffered += records.length;
  }

  /** Removes up to `max` records in fetch order and advances positions. */
  take(max: number): ConsumedRecord[] {
    let out: ConsumedRecord[] = [];
    while (this.head < this.chunks.length && out.length < max) {
      const chunk = this.chunks[this.head];
      const count = Math.min(max - out.length, chunk.records.length - chunk.next);
      // Most polls start at a chunk: take a slice of it instead of copying record by record.
      if (out.length === 0) out = chunk.records.slice(chunk.next, chunk.next + count);
      else for (let i = 0; i < count; i++) out.push(chunk.records[chunk.next + i]);
      chunk.next += count;
      this.buffered -= count;
      if (chunk.next < chunk.records.length) {
        this.positionByKey.set(chunk.key, nextOffset(chunk.records[chunk.next - 1].offset));
        break;
      }
      this.positionByKey.set(chunk.key, chunk.end);
      this.chunksPerKey.set(chunk.key, (this.chunksPerKey.get(chunk.key) ?? 1) - 1);
      this.head++;
    }
    // Compact occasionally so the array does not grow without bound while staying O(1) per chunk.
    if (this.head > 1024 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
    return out;
  }
}

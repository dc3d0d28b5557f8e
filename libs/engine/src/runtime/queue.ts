import { type InputMessage, messageSize } from './records';

/** Counts messages accepted but not yet fully handled, so a test driver can wait until the job is quiet. */
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  add(): void {
    this.count++;
  }

  done(): void {
    if (--this.count === 0) {
      const waiters = this.waiters;
      this.waiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  quiet(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}

/**
 * A subtask's bounded input. Producers offer whole batches and then await `writable()`, so a slow subtask blocks
 * its producers (backpressure) at batch granularity instead of per record.
 */
export class InputQueue {
  private readonly items: InputMessage[] = [];
  private head = 0;
  private size = 0;
  private taker: ((message: InputMessage | undefined) => void) | null = null;
  private takerTimer: NodeJS.Timeout | null = null;
  private writers: (() => void)[] = [];
  private closed = false;

  constructor(
    readonly capacity: number,
    private readonly inFlight: InFlight,
  ) {}

  get buffered(): number {
    return this.size;
  }

  offer(message: InputMessage): void {
    this.inFlight.add();
    if (this.taker) {
      const taker = this.taker;
      this.clearTaker();
      taker(message);
      return;
    }
    this.items.push(message);
    this.size += messageSize(message);
  }

  /** Resolves when the queue is below capacity. */
  writable(): Promise<void> {
    if (this.closed || this.size < this.capacity) return Promise.resolve();
    return new Promise((resolve) => this.writers.push(resolve));
  }

  /** The subtask stopped: producers must not wait for room that will never come. */
  close(): void {
    this.closed = true;
    const writers = this.writers;
    this.writers = [];
    for (const resolve of writers) resolve();
    this.interrupt();
  }

  /** The next message, or undefined after `timeoutMs` without one. One taker at a time. */
  take(timeoutMs: number): Promise<InputMessage | undefined> {
    if (this.head < this.items.length) {
      const message = this.items[this.head++];
      if (this.head > 1024 && this.head * 2 > this.items.length) {
        this.items.splice(0, this.head);
        this.head = 0;
      }
      this.size -= messageSize(message);
      if (this.size < this.capacity && this.writers.length > 0) {
        const writers = this.writers;
        this.writers = [];
        for (const resolve of writers) resolve();
      }
      return Promise.resolve(message);
    }
    return new Promise((resolve) => {
      this.taker = resolve;
      this.takerTimer = setTimeout(() => {
        this.clearTaker();
        resolve(undefined);
      }, timeoutMs);
    });
  }

  /**
   * Takes further data messages that are already queued right behind the one just taken, up to `maxRecords`, so a
   * subtask can process them as one batch (one prefetch, one emit). Each still needs its own `handled()`.
   */
  takeQueuedData(maxRecords: number): InputMessage[] {
    const out: InputMessage[] = [];
    let taken = 0;
    while (this.head < this.items.length) {
      const next = this.items[this.head];
      if (next.kind !== 'data' || taken + next.records.length > maxRecords) break;
      this.head++;
      this.size -= next.records.length;
      taken += next.records.length;
      out.push(next);
    }
    if (out.length > 0 && this.size < this.capacity && this.writers.length > 0) {
      const writers = this.writers;
      this.writers = [];
      for (const resolve of writers) resolve();
    }
    return out;
  }

  /** Wakes a waiting taker without a message (stop). */
  interrupt(): void {
    const taker = this.taker;
    this.clearTaker();
    taker?.(undefined);
  }

  /** Marks a taken message as fully handled. */
  handled(): void {
    this.inFlight.done();
  }

  private clearTaker(): void {
    if (this.takerTimer) clearTimeout(this.takerTimer);
    this.takerTimer = null;
    this.taker = null;
  }
}

/** The part of a streamx Readable (rocksdb-native's iterator) that ReadableDrain uses. */
export interface ChunkSource<T> {
  read(): T | null;
  on(event: 'readable' | 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/**
 * Reads a streamx Readable in chunks: everything it has buffered synchronously (read() until null), then one wait
 * for more. Same protocol as streamx's own async iterator (a 'readable' listener, read()), without its promise
 * per entry.
 */
export class ReadableDrain<T> {
  private ended = false;
  private closed = false;
  private error: Error | null = null;
  private wake: (() => void) | null = null;

  constructor(private readonly source: ChunkSource<T>) {
    const notify = (): void => {
      const wake = this.wake;
      this.wake = null;
      wake?.();
    };
    source.on('readable', notify);
    source.on('end', () => {
      this.ended = true;
      notify();
    });
    source.on('close', () => {
      this.closed = true;
      notify();
    });
    source.on('error', (err) => {
      this.error = err;
      notify();
    });
  }

  /** Up to `max` buffered items, without waiting (empty when nothing is buffered). */
  take(max: number): T[] {
    this.check();
    const out: T[] = [];
    let item: T | null;
    while (out.length < max && (item = this.source.read()) !== null) out.push(item);
    return out;
  }

  /** True once the stream ended and everything it held was taken. */
  get done(): boolean {
    return this.ended;
  }

  /** Waits until more may be buffered (or the end). A stream closed before its end is an error. */
  async wait(): Promise<void> {
    this.check();
    await new Promise<void>((resolve) => (this.wake = resolve));
    this.check();
  }

  private check(): void {
    if (this.error) throw this.error;
    if (this.closed && !this.ended) throw new Error('the store iterator was closed before its end');
  }
}

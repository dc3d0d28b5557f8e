import type { KafkaWriter, ProducedRecord } from '@weir/kafka';

/** Records taken into one KafkaWriter.send: large enough to amortise a request, small enough to keep one ack short. */
const SEND_RECORDS = 4_096;
/** Records accepted but not yet acknowledged before `add` makes its caller wait (the sink's backpressure). */
const MAX_OUTSTANDING = 16_384;

/**
 * Write-behind for a KafkaWriter: `add` queues records and returns at once while fewer than MAX_OUTSTANDING are
 * unacknowledged; one send at a time (the writer's idempotence needs that) takes everything queued meanwhile. A
 * subtask thus processes its next batch while the previous one is on the wire, and records that arrive during a send
 * leave together in the next one, instead of every batch waiting a full acks=all round trip before the next starts.
 *
 * Order is kept (one FIFO, one send in flight). The first failed send fails every later `add`, `drain` and `close`,
 * so the subtask fails as it did when it awaited each write. `drain()` resolves once everything added is
 * acknowledged: sinks call it at checkpoint barriers and at the end of input, so a checkpoint never covers
 * records that are not yet in Kafka.
 */
export class WriteBehind {
  private queued: ProducedRecord[] = [];
  private inFlight = 0;
  private sending: Promise<void> | null = null;
  private failure: unknown = null;
  private roomWaiters: (() => void)[] = [];

  constructor(
    private readonly writer: KafkaWriter,
    private readonly start: () => Promise<void>,
  ) {}

  get outstanding(): number {
    return this.queued.length + this.inFlight;
  }

  add(records: readonly ProducedRecord[]): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    for (const r of records) this.queued.push(r);
    this.sending ??= this.sendLoop();
    if (this.outstanding < MAX_OUTSTANDING) return Promise.resolve();
    return new Promise<void>((resolve) => this.roomWaiters.push(resolve)).then(() => {
      if (this.failure) throw this.failure;
    });
  }

  /** Resolves once every record added so far is acknowledged; rejects with the first send's failure. */
  async drain(): Promise<void> {
    while (this.sending) await this.sending;
    if (this.failure) throw this.failure;
  }

  private async sendLoop(): Promise<void> {
    try {
      await this.start();
      while (this.queued.length > 0 && !this.failure) {
        const batch = this.queued.length <= SEND_RECORDS ? this.queued : this.queued.slice(0, SEND_RECORDS);
        this.queued = batch === this.queued ? [] : this.queued.slice(SEND_RECORDS);
        this.inFlight = batch.length;
        await this.writer.send(batch);
        this.inFlight = 0;
        this.wakeWaiters();
      }
    } catch (err) {
      this.failure = err;
      this.queued = [];
      this.inFlight = 0;
      this.wakeWaiters();
    } finally {
      this.sending = null;
    }
  }

  private wakeWaiters(): void {
    if (this.roomWaiters.length === 0 || (this.outstanding >= MAX_OUTSTANDING && !this.failure)) return;
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const wake of waiters) wake();
  }
}

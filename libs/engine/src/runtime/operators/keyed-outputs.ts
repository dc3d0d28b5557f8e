import type { StreamRecord } from '../records';

/** The current record's time: what outputs are stamped with unless user code says otherwise. */
export interface RecordTime {
  readonly timestamp: number;
  readonly ingestMs: number;
}

/**
 * A keyed operator's outputs, gathered per batch (or per chunk of a long firing) and handed downstream at once: the
 * main output and side outputs by tag.
 */
export class KeyedOutputs {
  private out: StreamRecord[] = [];
  private readonly sides = new Map<string, StreamRecord[]>();

  constructor(
    private readonly time: RecordTime,
    private readonly sink: {
      readonly emit: (records: readonly StreamRecord[]) => void;
      readonly emitSide: (tagId: string, records: readonly StreamRecord[]) => void;
      /** Waits until the terminals downstream took everything emitted so far. */
      readonly emitOutputs: () => Promise<void>;
    },
  ) {}

  emit(value: unknown, timestamp?: number): void {
    this.out.push({ value, timestamp: timestamp ?? this.time.timestamp, ingestMs: this.time.ingestMs });
  }

  emitRecord(record: StreamRecord): void {
    this.out.push(record);
  }

  emitSide(tagId: string, value: unknown, timestamp?: number): void {
    let list = this.sides.get(tagId);
    if (!list) this.sides.set(tagId, (list = []));
    list.push({ value, timestamp: timestamp ?? this.time.timestamp, ingestMs: this.time.ingestMs });
  }

  /** Hands what is gathered downstream. */
  drain(): void {
    if (this.out.length > 0) {
      const out = this.out;
      this.out = [];
      this.sink.emit(out);
    }
    for (const [tag, list] of this.sides) {
      if (list.length === 0) continue;
      this.sides.set(tag, []);
      this.sink.emitSide(tag, list);
    }
  }

  /** Hands what is gathered downstream and waits until the terminals took it (a long firing, chunk by chunk). */
  async handOver(): Promise<void> {
    this.drain();
    await this.sink.emitOutputs();
  }
}

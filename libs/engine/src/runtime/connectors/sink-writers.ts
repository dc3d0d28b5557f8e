import type { KafkaConnector, KafkaWriter, ProducedRecord } from '@weir/kafka';
import type { CallbackSinkSpec, KafkaSinkSpec } from '../../sdk/connectors';
import type { StreamRecord } from '../records';
import { checkRecordSize } from './record-size';
import { WriteBehind } from './write-behind';

/** Where a sink subtask's batches go. One write per input batch. */
export interface SinkWriter {
  write(records: readonly StreamRecord[]): Promise<void>;
  close(): Promise<void>;
}

export interface CollectedRecord<T = unknown> {
  readonly value: T;
  readonly timestamp: number;
}

/**
 * Collects a sink's output in memory (test driver, RunningJob.collected). Shared by the sink's subtasks. The records
 * are kept as they arrive (a StreamRecord is a CollectedRecord with more fields): a copy per result was one more
 * long-lived object per output record for the garbage collector. The test driver projects them for comparisons.
 */
export class MemorySinkWriter implements SinkWriter {
  constructor(private readonly into: CollectedRecord[]) {}

  write(records: readonly StreamRecord[]): Promise<void> {
    const into = this.into;
    for (let i = 0; i < records.length; i++) into.push(records[i]);
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Hands each batch to a callbackSink's function; a throw fails the job (it is the sink, not user code per record). */
export class CallbackSinkWriter implements SinkWriter {
  constructor(private readonly spec: CallbackSinkSpec<unknown>) {}

  write(records: readonly StreamRecord[]): Promise<void> {
    this.spec.write(records);
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Hands each batch to a write-behind KafkaWriter (acks=all, idempotent; write-behind.ts): `write` returns once the
 * records are queued, not acknowledged, unless too many are outstanding. The record timestamp is the event time.
 * `drain()` (checkpoint barriers) and `close()` (end of input) wait for every acknowledgement.
 */
export class KafkaSinkWriter implements SinkWriter {
  private readonly writer: KafkaWriter;
  private readonly behind: WriteBehind;
  private started: Promise<void> | null = null;

  constructor(
    kafka: KafkaConnector,
    writerId: string,
    private readonly spec: KafkaSinkSpec<unknown>,
  ) {
    this.writer = kafka.writer({ writerId });
    this.behind = new WriteBehind(this.writer, () => (this.started ??= this.writer.start()));
  }

  write(records: readonly StreamRecord[]): Promise<void> {
    const { topic, format, key } = this.spec;
    const out = new Array<ProducedRecord>(records.length);
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      const k = key ? key(r.value) : null;
      // As bytes: the writer then hands the record to the client as it is (one object per record, not two).
      const keyBytes = typeof k === 'string' ? Buffer.from(k) : null;
      const value = format.encode(r.value);
      checkRecordSize(this.spec, keyBytes, value);
      out[i] = { topic, key: keyBytes, value, timestamp: Number.isFinite(r.timestamp) ? Math.max(0, Math.floor(r.timestamp)) : undefined };
    }
    return this.behind.add(out);
  }

  /** Resolves once everything written so far is in Kafka. */
  drain(): Promise<void> {
    return this.behind.drain();
  }

  async close(): Promise<void> {
    try {
      await this.behind.drain();
    } finally {
      if (this.started) await this.started.catch(() => undefined);
      await this.writer.close();
    }
  }
}

import type { KafkaConnector, KafkaWriter } from '@weir/kafka';
import type { KafkaSinkSpec } from '../../sdk/connectors';
import type { StreamRecord } from '../records';

/** Where a sink subtask's batches go. One write per input batch. */
export interface SinkWriter {
  write(records: readonly StreamRecord[]): Promise<void>;
  close(): Promise<void>;
}

export interface CollectedRecord<T = unknown> {
  readonly value: T;
  readonly timestamp: number;
}

/** Collects a sink's output in memory (test driver, RunningJob.collected). Shared by the sink's subtasks. */
export class MemorySinkWriter implements SinkWriter {
  constructor(private readonly into: CollectedRecord[]) {}

  write(records: readonly StreamRecord[]): Promise<void> {
    for (const r of records) this.into.push({ value: r.value, timestamp: r.timestamp });
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Writes a batch with one KafkaWriter.send (acks=all, idempotent); the record timestamp is the event time. */
export class KafkaSinkWriter implements SinkWriter {
  private readonly writer: KafkaWriter;
  private started: Promise<void> | null = null;

  constructor(
    kafka: KafkaConnector,
    writerId: string,
    private readonly spec: KafkaSinkSpec<unknown>,
  ) {
    this.writer = kafka.writer({ writerId });
  }

  async write(records: readonly StreamRecord[]): Promise<void> {
    this.started ??= this.writer.start();
    await this.started;
    const { topic, format, key } = this.spec;
    await this.writer.send(
      records.map((r) => ({
        topic,
        key: key ? key(r.value) : null,
        value: format.encode(r.value),
        timestamp: Number.isFinite(r.timestamp) ? Math.max(0, Math.floor(r.timestamp)) : undefined,
      })),
    );
  }

  async close(): Promise<void> {
    if (this.started) await this.started.catch(() => undefined);
    await this.writer.close();
  }
}

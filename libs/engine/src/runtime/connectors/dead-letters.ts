import type { KafkaConnector, KafkaWriter } from '@weir/kafka';
import type { DeadLetter, DeadLetterQueue, SubtaskMetricsRecorder } from '../ports';

/** In-memory dead letters (test driver); shared by every subtask of a job. */
export class MemoryDeadLetters implements DeadLetterQueue {
  constructor(
    readonly letters: DeadLetter[] = [],
    private readonly metrics?: SubtaskMetricsRecorder,
  ) {}

  add(letter: DeadLetter): void {
    this.letters.push(letter);
    this.metrics?.onDeadLetter(1);
  }

  emit(): Promise<void> {
    return Promise.resolve();
  }

  forSubtask(metrics: SubtaskMetricsRecorder): MemoryDeadLetters {
    return new MemoryDeadLetters(this.letters, metrics);
  }
}

/**
 * Dead letters to a Kafka topic: the value is the original bytes; the reason, error, operator and identity travel in
 * headers, so a consumer can replay the record after fixing the job. One batched send per emit.
 */
export class KafkaDeadLetters implements DeadLetterQueue {
  private pending: DeadLetter[] = [];
  private started: Promise<void> | null = null;
  private readonly writer: KafkaWriter;

  constructor(
    kafka: KafkaConnector,
    writerId: string,
    private readonly topic: string,
    private readonly metrics: SubtaskMetricsRecorder,
  ) {
    this.writer = kafka.writer({ writerId });
  }

  add(letter: DeadLetter): void {
    this.pending.push(letter);
  }

  async emit(): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.started ??= this.writer.start();
    await this.started;
    await this.writer.send(
      batch.map((l) => ({
        topic: this.topic,
        value: l.payload,
        timestamp: Number.isFinite(l.timestamp) ? Math.max(0, Math.floor(l.timestamp)) : undefined,
        headers: {
          'weir-reason': Buffer.from(l.reason),
          'weir-error': Buffer.from(l.error.slice(0, 2000)),
          'weir-operator': Buffer.from(l.operatorId),
          'weir-subtask': Buffer.from(String(l.subtask)),
          'weir-tenant': Buffer.from(l.tenantId),
          'weir-job': Buffer.from(l.jobId),
        },
      })),
    );
    this.metrics.onDeadLetter(batch.length);
  }

  async close(): Promise<void> {
    await this.emit();
    if (this.started) await this.started.catch(() => undefined);
    await this.writer.close();
  }
}

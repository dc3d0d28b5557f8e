/**
 * The run control channel over Kafka: the job's control topic (one partition, so every process reads one order),
 * JSON messages stamped with the run (incarnation) and the sending process. A process reads from the end of the topic
 * as it was when it started; messages of other runs (a zombie of a previous run, say) are skipped.
 */
import { jobClientId, runControlTopic } from '@weir/engine';
import type { KafkaConnector, KafkaReader, KafkaWriter } from '@weir/kafka';
import type { RunControlChannel, RunControlDelivery, RunControlMessage } from './run-control';

/** Control messages are only needed while their run lives; an hour covers any checkpoint timeout. */
const RETENTION_MS = 3_600_000;

interface Envelope {
  readonly run: number;
  readonly from: number;
  readonly message: RunControlMessage;
}

export interface KafkaRunControlOptions {
  readonly tenantId: string;
  readonly jobId: string;
  /** The run number: the incarnation every process of this run shares. */
  readonly run: number;
  /** This process's index in the run. */
  readonly process: number;
}

export class KafkaRunControl implements RunControlChannel {
  private readonly topic: string;
  private writer: KafkaWriter | null = null;
  private reader: KafkaReader | null = null;
  private loop: Promise<void> | null = null;
  private stopped = false;
  /** Publishing keeps the order of this process's messages (one send at a time; see flush). */
  private sending: Promise<void> = Promise.resolve();
  private flushing = false;
  private readonly queued: { readonly value: string; readonly resolve: () => void; readonly reject: (err: Error) => void }[] = [];

  constructor(
    private readonly kafka: KafkaConnector,
    private readonly options: KafkaRunControlOptions,
  ) {
    this.topic = runControlTopic(options.tenantId, options.jobId);
  }

  async start(deliver: (delivery: RunControlDelivery) => void): Promise<void> {
    const { tenantId, jobId, process, run } = this.options;
    const admin = this.kafka.admin();
    try {
      await admin.ensureTopics([{ topic: this.topic, partitions: 1, config: { 'retention.ms': String(RETENTION_MS) } }]);
    } finally {
      await admin.close();
    }
    const id = jobClientId(tenantId, jobId, `control-${run}-${process}`);
    this.writer = this.kafka.writer({ writerId: id });
    await this.writer.start();
    this.reader = this.kafka.reader({ readerId: id, assignments: [{ topic: this.topic, partition: 0, offset: 'latest' }] });
    await this.reader.start();
    const reader = this.reader;
    this.loop = (async () => {
      while (!this.stopped) {
        const records = await reader.poll(1_000, 200).catch(() => []);
        for (const r of records) {
          if (!r.value) continue;
          let envelope: Envelope;
          try {
            envelope = JSON.parse(r.value.toString('utf8')) as Envelope;
          } catch {
            continue; // not ours: the topic is internal, but a bad record must not stop the run
          }
          if (envelope.run === run) deliver({ from: envelope.from, message: envelope.message });
        }
      }
    })();
  }

  publish(message: RunControlMessage): Promise<void> {
    const writer = this.writer;
    if (!writer) return Promise.reject(new Error('the run control channel is not started'));
    const envelope: Envelope = { run: this.options.run, from: this.options.process, message };
    return new Promise<void>((resolve, reject) => {
      this.queued.push({ value: JSON.stringify(envelope), resolve, reject });
      if (!this.flushing) this.sending = this.flush(writer);
    });
  }

  /**
   * One send in flight; what is published meanwhile leaves together in the next one (the move of a step publishes a
   * message per key group: one round trip for them all, not one each). Order holds: one FIFO, one request at a time.
   */
  private async flush(writer: KafkaWriter): Promise<void> {
    this.flushing = true;
    try {
      while (this.queued.length > 0) {
        const batch = this.queued.splice(0);
        try {
          await writer.send(batch.map((m) => ({ topic: this.topic, partition: 0, value: m.value })));
          for (const m of batch) m.resolve();
        } catch (err) {
          for (const m of batch) m.reject(err as Error);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  async close(): Promise<void> {
    this.stopped = true;
    await this.loop?.catch(() => undefined);
    await Promise.allSettled([this.reader?.close(), this.sending.then(() => this.writer?.close())]);
  }
}

import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import { createKafkaConnector, type KafkaAdmin, type KafkaConnector, type KafkaWriter, type ProducedRecord } from '@weir/kafka';
import type { Logger } from 'pino';
import { ROOT_LOGGER, WEIR_CONFIG } from '../control-plane-options';

export class RulesPublishError extends Error {
  override readonly name = 'RulesPublishError';
}

/**
 * The control plane's Kafka side for rules: one writer for rule records, readers for the acks topics. Rule records
 * go to partition 0 of the rules topic (created with one partition when missing): one partition is one order, so
 * every subtask sees a rollout's records in the same order, after the previous rollout's.
 */
@Injectable()
export class RulesKafka implements OnApplicationShutdown {
  readonly connector: KafkaConnector;
  private readonly admin: KafkaAdmin;
  private writer: Promise<KafkaWriter> | null = null;
  private readonly ensured = new Set<string>();

  constructor(@Inject(WEIR_CONFIG) config: WeirConfig, @Inject(ROOT_LOGGER) logger: Logger) {
    const log = logger.child({ component: 'rules-kafka' });
    this.connector = createKafkaConnector({
      brokers: config.WEIR_KAFKA_BROKERS,
      clientId: `${config.WEIR_KAFKA_CLIENT_ID}-control-plane-rules`,
      log: (level, message, fields) => log[level]({ ...fields }, message),
    });
    this.admin = this.connector.admin();
  }

  /** Creates the topics when missing (one partition each); remembered per process, so a rollout pays it once. */
  async ensureTopics(topics: readonly string[]): Promise<void> {
    const missing = topics.filter((t) => !this.ensured.has(t));
    if (missing.length === 0) return;
    await this.admin.ensureTopics(missing.map((topic) => ({ topic, partitions: 1 })));
    for (const t of missing) this.ensured.add(t);
  }

  /** Sends a rollout's records in one batch; resolves with the offset of the last one in partition 0. */
  async publish(records: readonly ProducedRecord[]): Promise<string> {
    try {
      const writer = await this.startedWriter();
      await writer.send(records.map((r) => ({ ...r, partition: 0 })));
      const offsets = await this.admin.offsets(records[0].topic);
      const latest = offsets.find((o) => o.partition === 0)?.latest ?? '0';
      return String(BigInt(latest) - 1n);
    } catch (err) {
      throw new RulesPublishError(`publishing rules to ${records[0]?.topic} failed: ${(err as Error).message}`, { cause: err });
    }
  }

  offsets(topic: string): Promise<{ partition: number; earliest: string; latest: string }[]> {
    return this.admin.offsets(topic);
  }

  partitionCount(topic: string): Promise<number> {
    return this.admin.partitionCount(topic);
  }

  private startedWriter(): Promise<KafkaWriter> {
    if (!this.writer) {
      // failFast: a publish answers an HTTP request; after a topic deletion the writer recovers within ~3 s (kafkajs-writer.ts).
      const writer = this.connector.writer({ writerId: 'control-plane-rules', failFast: true });
      this.writer = writer.start().then(() => writer);
      this.writer.catch(() => (this.writer = null));
    }
    return this.writer;
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.writer) await (await this.writer.catch(() => null))?.close().catch(() => undefined);
    await this.admin.close().catch(() => undefined);
  }
}

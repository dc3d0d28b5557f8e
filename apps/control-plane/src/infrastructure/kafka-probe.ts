import { Kafka, logLevel, type Admin } from 'kafkajs';

/**
 * Answers "does a Kafka broker respond?" for the readiness check. It keeps one admin connection and drops it after
 * any failure, so a restarted broker is found again on the next probe. When libs/kafka lands, its
 * `admin().ping()` replaces this file.
 */
export class KafkaProbe {
  private readonly kafka: Kafka;
  private admin: Admin | undefined;
  private connecting: Promise<Admin> | undefined;

  constructor(brokers: readonly string[], clientId: string, timeoutMs: number) {
    this.kafka = new Kafka({
      brokers: [...brokers],
      clientId: `${clientId}-health`,
      connectionTimeout: timeoutMs,
      requestTimeout: timeoutMs,
      // The health endpoint reports failures; kafkajs's own retries and logs would only delay and repeat them.
      retry: { retries: 0 },
      logLevel: logLevel.NOTHING,
    });
  }

  /** Resolves with the number of brokers that answered the metadata request. */
  async ping(): Promise<{ brokers: number }> {
    try {
      const admin = await this.connected();
      const cluster = await admin.describeCluster();
      return { brokers: cluster.brokers.length };
    } catch (err) {
      await this.reset();
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.reset();
  }

  private connected(): Promise<Admin> {
    if (this.admin) return Promise.resolve(this.admin);
    this.connecting ??= (async () => {
      const admin = this.kafka.admin();
      try {
        await admin.connect();
      } catch (err) {
        await admin.disconnect().catch(() => undefined);
        throw err;
      }
      this.admin = admin;
      return admin;
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async reset(): Promise<void> {
    const admin = this.admin;
    this.admin = undefined;
    await admin?.disconnect().catch(() => undefined);
  }
}

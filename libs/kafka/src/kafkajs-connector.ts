import { Kafka, logLevel } from 'kafkajs';
import type { KafkaAdmin, KafkaConnector, KafkaConnectorConfig, KafkaReader, KafkaWriter } from './contract';
import { KafkaUsageError } from './errors';
import { KafkajsAdmin } from './kafkajs-admin';
import { KafkajsReader } from './kafkajs-reader';
import { KafkajsWriter } from './kafkajs-writer';
import { kafkajsLevel, kafkajsLogCreator, stderrSink } from './log-adapter';
import { adminRetry } from './tuning';

// Ids end up in group ids and log lines: printable, no spaces, bounded (Kafka itself accepts any string).
const ID = /^[\x21-\x7e]{1,200}$/;

function assertId(kind: string, id: string): void {
  if (!ID.test(id)) throw new KafkaUsageError(`${kind} "${id}" must be 1-200 printable ASCII characters without spaces`);
}

/**
 * The kafkajs-backed connector. Readers, writers and admins made here are independent clients (each with its own
 * connections), created unconnected: start() or the first admin call connects.
 */
export function createKafkaConnector(config: KafkaConnectorConfig): KafkaConnector {
  if (config.brokers.length === 0) throw new KafkaUsageError('Kafka connector needs at least one broker (host:port)');
  const brokers = [...config.brokers];
  const sasl = config.sasl ? { sasl: { mechanism: 'scram-sha-256' as const, username: config.sasl.username, password: config.sasl.password } } : {};
  const logging = {
    logLevel: kafkajsLevel(config.logLevel),
    logCreator: kafkajsLogCreator(config.log ?? stderrSink, config.clientId, config.logLevel),
  };
  // kafkajs's 1 s connection timeout is tight on a loaded machine; a dead broker still fails fast (ECONNREFUSED).
  const kafka = new Kafka({ clientId: config.clientId, brokers, connectionTimeout: 3_000, ...sasl, ...logging });
  const adminClient = new Kafka({
    clientId: config.clientId,
    brokers,
    connectionTimeout: 3_000,
    retry: adminRetry,
    ...sasl,
    ...logging,
  });
  const probeClient = new Kafka({
    clientId: `${config.clientId}-probe`,
    brokers,
    connectionTimeout: 1_000,
    requestTimeout: 2_000,
    retry: { retries: 0 },
    ...sasl,
    // A failed ping is reported to its caller (the health check); logging it too would only repeat it.
    logLevel: logLevel.NOTHING,
  });
  const admin = (): KafkajsAdmin => new KafkajsAdmin(adminClient, brokers, () => probeClient.admin());

  return {
    reader(options): KafkaReader {
      assertId('readerId', options.readerId);
      return new KafkajsReader(kafka, options, admin(), brokers);
    },
    writer(options): KafkaWriter {
      assertId('writerId', options.writerId);
      return new KafkajsWriter(kafka, options, brokers);
    },
    admin: (): KafkaAdmin => admin(),
  };
}

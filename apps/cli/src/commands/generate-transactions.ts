import { loadConfig } from '@weir/config';
import { type Burst, TRANSACTION_KEY_FIELDS, type TransactionKeyField, TransactionStream } from '@weir/datagen';
import { createKafkaConnector } from '@weir/kafka';
import { type Command, EXIT, optionalNumber, requiredString, UsageError } from '../command';
import { produceTransactions } from '../generate/produce-transactions';

/** `weir generate transactions`: a paced, seeded transaction stream to a Kafka topic. */
export const generateTransactionsCommand: Command = {
  path: ['generate', 'transactions'],
  summary: 'produce a fixed-rate, seeded, Zipf-skewed transaction stream (with an optional viral burst) to Kafka',
  usage:
    '--topic T --rate N --duration S [--seed X] [--partitions P] [--start-time MS]\n' +
    '    [--burst-key K [--burst-field payer|beneficiary|card|merchant] --burst-share F --burst-at S --burst-for S]',
  options: {
    topic: { type: 'string' },
    rate: { type: 'string' },
    duration: { type: 'string' },
    seed: { type: 'string', default: '1' },
    partitions: { type: 'string', default: '1' },
    'start-time': { type: 'string' },
    'burst-key': { type: 'string' },
    'burst-field': { type: 'string', default: 'merchant' },
    'burst-share': { type: 'string' },
    'burst-at': { type: 'string' },
    'burst-for': { type: 'string' },
  },
  async run({ values }, io) {
    const topic = requiredString(values, 'topic');
    const rate = optionalNumber(values, 'rate', (n) => n > 0, 'a positive number of transactions per second');
    const duration = optionalNumber(values, 'duration', (n) => n > 0, 'a positive number of seconds');
    if (rate === undefined || duration === undefined) throw new UsageError('--rate and --duration are required');
    const seed = optionalNumber(values, 'seed', Number.isInteger, 'an integer')!;
    const partitions = optionalNumber(values, 'partitions', (n) => Number.isInteger(n) && n >= 1, 'a positive integer')!;
    const startTime = optionalNumber(values, 'start-time', Number.isInteger, 'epoch milliseconds');
    const streamOptions = { seed, ratePerSec: rate, burst: burstOf(values) };
    // Checked before connecting: bad options are a usage error, not a half-started run.
    new TransactionStream({ ...streamOptions, startTime: 0 });
    const count = Math.floor(rate * duration);

    const config = loadConfig(io.env);
    const kafka = createKafkaConnector({ brokers: config.WEIR_KAFKA_BROKERS, clientId: `${config.WEIR_KAFKA_CLIENT_ID}-cli` });
    io.out(`generating ${count} transactions to ${topic} at ${rate}/s (seed ${seed})`);
    const summary = await produceTransactions(kafka, streamOptions, { topic, count, partitions, startTime });
    io.out(
      `sent ${summary.sent} transactions in ${(summary.elapsedMs / 1000).toFixed(1)} s ` +
        `(${Math.round((summary.sent * 1000) / Math.max(1, summary.elapsedMs))}/s); at most ${summary.maxBehindMs} ms behind schedule`,
    );
    return EXIT.ok;
  },
};

function burstOf(values: Record<string, unknown>): Burst | undefined {
  const key = values['burst-key'];
  if (key === undefined) {
    if (values['burst-share'] !== undefined || values['burst-at'] !== undefined || values['burst-for'] !== undefined) {
      throw new UsageError('--burst-share, --burst-at and --burst-for need --burst-key');
    }
    return undefined;
  }
  const field = values['burst-field'] as string;
  if (!TRANSACTION_KEY_FIELDS.includes(field as TransactionKeyField)) {
    throw new UsageError(`--burst-field must be one of ${TRANSACTION_KEY_FIELDS.join(', ')}, got "${field}"`);
  }
  const share = optionalNumber(values, 'burst-share', (n) => n >= 0 && n <= 1, 'a fraction from 0 to 1');
  const at = optionalNumber(values, 'burst-at', (n) => n >= 0, 'a number of seconds from the start');
  const forS = optionalNumber(values, 'burst-for', (n) => n > 0, 'a positive number of seconds');
  if (share === undefined || at === undefined || forS === undefined) throw new UsageError('--burst-key needs --burst-share, --burst-at and --burst-for');
  return { field: field as TransactionKeyField, key: key as string, share, atMs: at * 1_000, forMs: forS * 1_000 };
}

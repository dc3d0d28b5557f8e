/**
 * Weir's Kafka errors. kafkajs errors never cross the connector boundary: they are wrapped into one of these, with a
 * message that says what to do and the original kept as `cause`.
 */
export class KafkaError extends Error {
  override readonly name: string = 'KafkaError';
  /** True when the same call may succeed later (broker restarting, leader moving). */
  readonly retriable: boolean;

  constructor(message: string, options: { cause?: unknown; retriable?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.retriable = options.retriable ?? false;
  }
}

/** No broker answered: it is down, unreachable, or the address is wrong. */
export class KafkaUnavailableError extends KafkaError {
  override readonly name = 'KafkaUnavailableError';
  constructor(message: string, cause?: unknown) {
    super(message, { cause, retriable: true });
  }
}

/** A topic is missing. Topics are created explicitly (ensureTopics); brokers do not auto-create them. */
export class TopicNotFoundError extends KafkaError {
  override readonly name = 'TopicNotFoundError';
  constructor(
    readonly topic: string,
    cause?: unknown,
  ) {
    super(`Kafka topic "${topic}" does not exist; create it with ensureTopics() first`, { cause });
  }
}

/** A topic exists but cannot serve as asked (too few partitions, invalid name or config). */
export class TopicConfigError extends KafkaError {
  override readonly name = 'TopicConfigError';
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
  }
}

/** Another writer with the same transactionalId started: this one is a zombie and must stop writing. */
export class KafkaFencedError extends KafkaError {
  override readonly name = 'KafkaFencedError';
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
  }
}

/**
 * The broker refused this client: its credentials were wrong, or its principal may not use the topic, group or
 * transactional id (a job host reaches only its own tenant's, apps/worker/src/kafka-access). Not retriable.
 */
export class KafkaAccessDeniedError extends KafkaError {
  override readonly name = 'KafkaAccessDeniedError';
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
  }
}

/** The connector was used against its contract (poll before start, transaction on a plain writer...). */
export class KafkaUsageError extends KafkaError {
  override readonly name = 'KafkaUsageError';
}

const unavailableNames = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError',
  'KafkaJSLockTimeout',
]);
const topicConfigTypes = new Set([
  'INVALID_PARTITIONS',
  'INVALID_REPLICATION_FACTOR',
  'INVALID_REPLICA_ASSIGNMENT',
  'INVALID_CONFIG',
  'INVALID_TOPIC_EXCEPTION',
  'POLICY_VIOLATION',
]);
const fencedTypes = new Set(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH']);
const deniedTypes = new Set([
  'TOPIC_AUTHORIZATION_FAILED',
  'GROUP_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
  'SASL_AUTHENTICATION_FAILED',
]);
const deniedNames = new Set(['KafkaJSSASLAuthenticationError']);

interface KafkajsErrorShape {
  name?: string;
  message?: string;
  type?: string;
  retriable?: boolean;
  topic?: string;
  cause?: unknown;
  errors?: unknown[];
}

/** The innermost kafkajs error: retries and aggregates wrap the one that says what happened. */
function rootCause(error: KafkajsErrorShape): KafkajsErrorShape {
  let current = error;
  for (let depth = 0; depth < 10; depth++) {
    const next = current.cause ?? current.errors?.[0];
    if (!next || typeof next !== 'object') break;
    current = next as KafkajsErrorShape;
  }
  return current;
}

/**
 * Errors that say a client's picture of the cluster is out of date rather than that the request is wrong: a topic
 * it knew was deleted, a partition or leader that moved. kafkajs refreshes metadata and retries these itself, but a
 * producer asks for every topic it ever wrote to on each refresh, so once one of them is deleted every refresh fails
 * the same way (tulios/kafkajs#1622): only a fresh client gets out of that.
 */
const staleMetadataTypes = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'UNKNOWN_TOPIC_ID', 'NOT_LEADER_FOR_PARTITION', 'LEADER_NOT_AVAILABLE']);
const staleMetadataNames = new Set(['KafkaJSTopicMetadataNotLoaded', 'KafkaJSMetadataNotLoaded']);

export function isStaleMetadataError(error: unknown): boolean {
  let current = (typeof error === 'object' && error !== null ? error : {}) as KafkajsErrorShape;
  for (let depth = 0; depth < 10; depth++) {
    if ((current.type !== undefined && staleMetadataTypes.has(current.type)) || (current.name !== undefined && staleMetadataNames.has(current.name))) return true;
    const next = current.cause ?? current.errors?.[0];
    if (!next || typeof next !== 'object') return false;
    current = next as KafkajsErrorShape;
  }
  return false;
}

/**
 * Turns whatever kafkajs threw into a Weir error. `action` says what Weir was doing ("sending to orders"), so the
 * message reads as a sentence a user can act on.
 */
export function wrapKafkaError(error: unknown, action: string, brokers: readonly string[] = []): KafkaError {
  if (error instanceof KafkaError) return error;
  const outer = (typeof error === 'object' && error !== null ? error : { message: String(error) }) as KafkajsErrorShape;
  const root = rootCause(outer);
  const detail = root.message ?? outer.message ?? 'unknown error';
  const names = [outer.name, root.name];

  if (names.some((n) => n !== undefined && unavailableNames.has(n))) {
    const where = brokers.length ? ` at ${brokers.join(',')}` : '';
    return new KafkaUnavailableError(
      `Kafka is unavailable while ${action}: no broker${where} answered (${detail}); check that the brokers run and ` +
        'WEIR_KAFKA_BROKERS is right',
      error,
    );
  }
  if ((root.type !== undefined && deniedTypes.has(root.type)) || names.some((n) => n !== undefined && deniedNames.has(n))) {
    return new KafkaAccessDeniedError(`Kafka refused access while ${action}: ${detail}`, error);
  }
  if (root.type === 'UNKNOWN_TOPIC_OR_PARTITION' && root.topic) return new TopicNotFoundError(root.topic, error);
  if (root.type !== undefined && topicConfigTypes.has(root.type)) {
    return new TopicConfigError(`Kafka rejected the topic while ${action}: ${detail}`, error);
  }
  if (root.type !== undefined && fencedTypes.has(root.type)) {
    return new KafkaFencedError(
      `Writer fenced while ${action}: another writer took over the same transactionalId; stop this one (${detail})`,
      error,
    );
  }
  return new KafkaError(`Kafka failed while ${action}: ${detail}`, {
    cause: error,
    retriable: root.retriable === true || outer.name === 'KafkaJSNumberOfRetriesExceeded',
  });
}

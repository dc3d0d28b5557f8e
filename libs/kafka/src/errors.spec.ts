import { describe, expect, it } from 'vitest';
import {
  KafkaAccessDeniedError,
  KafkaError,
  KafkaFencedError,
  KafkaUnavailableError,
  TopicConfigError,
  TopicNotFoundError,
  isStaleMetadataError,
  wrapKafkaError,
} from './errors';

const kafkajsError = (name: string, fields: Record<string, unknown> = {}) =>
  Object.assign(new Error(`${name} happened`), { name, ...fields });

describe('wrapKafkaError', () => {
  it('maps connection failures, even wrapped in retries, to KafkaUnavailableError naming the brokers', () => {
    const error = kafkajsError('KafkaJSNumberOfRetriesExceeded', {
      cause: kafkajsError('KafkaJSConnectionError', { message: 'connect ECONNREFUSED 127.0.0.1:9092' }),
    });
    const wrapped = wrapKafkaError(error, 'sending', ['127.0.0.1:9092']);
    expect(wrapped).toBeInstanceOf(KafkaUnavailableError);
    expect(wrapped.name).toBe('KafkaUnavailableError');
    expect(wrapped.retriable).toBe(true);
    expect(wrapped.message).toMatch(/127\.0\.0\.1:9092/);
    expect(wrapped.cause).toBe(error);
  });

  it('maps protocol error types to topic and fencing errors', () => {
    const unknown = kafkajsError('KafkaJSProtocolError', { type: 'UNKNOWN_TOPIC_OR_PARTITION', topic: 'orders' });
    expect(wrapKafkaError(unknown, 'reading')).toBeInstanceOf(TopicNotFoundError);
    const invalid = kafkajsError('KafkaJSProtocolError', { type: 'INVALID_CONFIG' });
    expect(wrapKafkaError(invalid, 'creating')).toBeInstanceOf(TopicConfigError);
    const aggregate = kafkajsError('KafkaJSAggregateError', { errors: [kafkajsError('KafkaJSProtocolError', { type: 'INVALID_PARTITIONS' })] });
    expect(wrapKafkaError(aggregate, 'creating')).toBeInstanceOf(TopicConfigError);
    const fenced = kafkajsError('KafkaJSProtocolError', { type: 'PRODUCER_FENCED' });
    expect(wrapKafkaError(fenced, 'committing')).toBeInstanceOf(KafkaFencedError);
  });

  it('maps authorization and authentication failures to KafkaAccessDeniedError, not retriable', () => {
    for (const type of ['TOPIC_AUTHORIZATION_FAILED', 'GROUP_AUTHORIZATION_FAILED', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED']) {
      const wrapped = wrapKafkaError(kafkajsError('KafkaJSProtocolError', { type }), 'sending to t.other.in');
      expect(wrapped).toBeInstanceOf(KafkaAccessDeniedError);
      expect(wrapped.retriable).toBe(false);
      expect(wrapped.message).toMatch(/^Kafka refused access while sending to t\.other\.in/);
    }
    expect(wrapKafkaError(kafkajsError('KafkaJSSASLAuthenticationError'), 'connecting')).toBeInstanceOf(KafkaAccessDeniedError);
  });

  it('keeps Weir errors as they are and wraps the rest in KafkaError', () => {
    const own = new TopicNotFoundError('x');
    expect(wrapKafkaError(own, 'anything')).toBe(own);
    const other = wrapKafkaError(kafkajsError('KafkaJSProtocolError', { type: 'NOT_LEADER', retriable: true }), 'fetching');
    expect(other).toBeInstanceOf(KafkaError);
    expect(other.retriable).toBe(true);
    expect(other.message).toMatch(/^Kafka failed while fetching/);
  });
});

describe('isStaleMetadataError', () => {
  it('finds a deleted topic or a moved leader inside retries, and nothing else', () => {
    const unknownTopic = kafkajsError('KafkaJSProtocolError', { type: 'UNKNOWN_TOPIC_OR_PARTITION', message: 'This server does not host this topic-partition' });
    expect(isStaleMetadataError(kafkajsError('KafkaJSNumberOfRetriesExceeded', { cause: unknownTopic }))).toBe(true);
    expect(isStaleMetadataError(kafkajsError('KafkaJSAggregateError', { errors: [kafkajsError('KafkaJSProtocolError', { type: 'LEADER_NOT_AVAILABLE' })] }))).toBe(true);
    expect(isStaleMetadataError(kafkajsError('KafkaJSTopicMetadataNotLoaded'))).toBe(true);
    expect(isStaleMetadataError(kafkajsError('KafkaJSConnectionError'))).toBe(false);
    expect(isStaleMetadataError(kafkajsError('KafkaJSProtocolError', { type: 'PRODUCER_FENCED' }))).toBe(false);
    expect(isStaleMetadataError('a string')).toBe(false);
  });
});
